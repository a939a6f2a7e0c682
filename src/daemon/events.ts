/**
 * The measurement engine's events on the main thread: each is recorded in the stores it concerns
 * (metrics, status, history, uptime record) and logged where on-call looks for it.
 */
import type { Logger } from 'pino';
import type { CheckResult } from '../kernel/check.js';
import type { MeasurementEvent } from '../measurement/messages.js';
import type { DaemonState, DaemonStores } from './stores.js';

/** What routing an event needs: the stores, the configuration in force, the log. */
export interface EventRoute {
  stores: DaemonStores;
  state: DaemonState;
  logger: Logger;
  /** The engine died: the daemon must stop looking healthy (`Daemon.failed`). */
  fail(reason: string): void;
}

/** Records one event of the measurement engine in the stores and the log. */
export function routeEvent(event: MeasurementEvent, route: EventRoute): void {
  const { stores, logger } = route;
  const { recorder } = stores;
  if (fromRemovedEnvironment(event, route.state.configured)) {
    if (event.type === 'result') logRun(logger, event.result);
    return;
  }
  switch (event.type) {
    case 'result':
      recordRun(event.result, route);
      break;
    case 'follow_up':
      recorder.recordFollowUp(event.environment, event.check, event.event);
      logger.info(
        {
          environment: event.environment,
          check: event.check,
          ...(event.event.type === 'ended' ? { end: event.event.end } : {}),
        },
        `${event.check} follow-up runs ${event.event.type}`,
      );
      break;
    case 'control':
      recorder.recordControlProbe(event.result, event.durationMs);
      break;
    case 'skip':
      recorder.recordSkip(event.environment, event.check, event.reason);
      logger.info(
        { environment: event.environment, check: event.check, reason: event.reason },
        'check run skipped',
      );
      break;
    case 'abandoned':
      // Logged where it happened, on the measurement thread.
      recorder.recordAbandoned(event.environment, event.check);
      break;
    case 'sessions_open':
      recordSessionsOpen(event.environment, event.count, route);
      break;
    case 'session_unrecoverable':
      recorder.recordUnrecoverable(event.environment);
      break;
    case 'ledger_writable':
      recorder.setLedgerWritable(event.writable);
      break;
    case 'lag':
      recorder.recordMeasurementLag(event.samplesMs);
      break;
    case 'contract_drift':
      recorder.setContractDrift(event.report);
      stores.status.setContractDrift(event.report);
      break;
    case 'log':
      logger[event.level](event.fields, event.msg);
      break;
    case 'ready':
      logger.info(
        { schedule: event.schedule, leftoverSessions: event.leftoverSessions },
        'schedules started',
      );
      break;
    case 'fatal':
      logger.error({ detail: event.message }, 'measurement engine failed');
      route.fail(event.message);
      break;
    case 'reloaded':
    case 'stopped':
      break;
  }
}

/** A run: its metrics and log line, and for a scheduled run the status page and uptime record. */
function recordRun(result: CheckResult, { stores, logger }: EventRoute): void {
  stores.recorder.recordResult(result);
  logRun(logger, result);
  // The status page and its history show scheduled runs; follow-ups are in their metrics.
  if (result.followUp === true) return;
  stores.status.add(result);
  stores.history.add(result);
  stores.uptime.record(result);
}

/** An environment's open sessions; a removed one's series lives while the ledger holds some. */
function recordSessionsOpen(environment: string, count: number, route: EventRoute): void {
  const { recorder, history } = route.stores;
  if (!route.state.configured.has(environment) && count === 0)
    recorder.forgetSessionsOpen(environment);
  else recorder.setSessionsOpen(environment, count);
  history.setSessionsOpen(environment, count);
}

/**
 * Whether `event` is about an environment that is no longer configured, and so has no series
 * left to record. A session reported unrecoverable is not: the runtime of a removed environment
 * still sweeps its sessions (docs/configuration.md, "Reload"), and one nobody can close is what
 * `IsaSyntheticSessionsUnrecoverable` must still see, so it is counted whatever the configuration.
 * Nor is the open-session count: the ledger's sessions of a removed environment are what
 * `IsaSyntheticSessionsLeaking` must see until they are closed (sessions/removed.ts).
 */
export function fromRemovedEnvironment(
  event: MeasurementEvent,
  configured: ReadonlySet<string>,
): boolean {
  switch (event.type) {
    case 'result':
      return !configured.has(event.result.environment);
    case 'skip':
    case 'abandoned':
    case 'follow_up':
      return !configured.has(event.environment);
    default:
      return false;
  }
}

/** One line per run: what on-call greps for. */
function logRun(logger: Logger, result: CheckResult): void {
  const requestIds = result.steps.map((s) => s.requestId).filter((id) => id !== null);
  logger[result.outcome === 'pass' ? 'info' : 'warn'](
    {
      environment: result.environment,
      check: result.check,
      outcome: result.outcome,
      reason: result.reason,
      ...result.summary,
      durationMs: result.durationMs,
      // Only when the run waited for request-budget tokens: that time is not in durationMs.
      ...(result.budgetWaitMs ? { budgetWaitMs: result.budgetWaitMs } : {}),
      steps: result.steps.map((s) => ({
        name: s.name,
        statusCode: s.statusCode,
        durationMs: s.durationMs,
        ...(s.error ? { error: s.error } : {}),
      })),
      ...(requestIds.length > 0 ? { requestIds } : {}),
      ...(result.followUp === true ? { followUp: true } : {}),
    },
    `${result.check}${result.followUp === true ? ' follow-up' : ''} ${result.outcome}`,
  );
}
