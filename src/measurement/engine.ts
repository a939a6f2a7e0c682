/**
 * The measurement engine: session ledger, environments and scheduler, reporting everything it does
 * as MeasurementEvents. It runs in a worker thread in the daemon, so that work on the main thread
 * (serving /metrics, logging) cannot delay a probe or its timestamps; `inline` mode runs it on the
 * calling thread for benchmarks and tests.
 */
import { createsSessions, type AnyCheck, type CheckLogger } from '../kernel/check.js';
import { watchCallsInFlight } from '../api/client.js';
import { withFields } from '../kernel/logger.js';
import { startControlProbe } from '../control/probe.js';
import { EnvironmentRuntime } from '../environment.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { SessionLedger, type CreateIntent } from '../sessions/ledger.js';
import { UNRECOVERABLE_MESSAGE, unrecoverableFields } from '../sessions/unrecoverable.js';
import { startLagSampler } from './lag.js';
import {
  plainFields,
  type LogLevel,
  type MeasurementEvent,
  type MeasurementInit,
} from './messages.js';

export interface MeasurementEngine {
  stop(graceMs: number): Promise<void>;
}

export interface EngineOptions {
  /** The checks of this build, from the composition root (`checks/index.ts`). */
  checks: readonly AnyCheck[];
  /** Called just before each scheduled run (the worker collects its young generation). */
  prepareRun?: () => void;
}

/**
 * Opens the ledger, checks that it can be written, starts the schedules, and only then, in the
 * background, closes what a previous process left open: start-up never waits for the API (a
 * sweep may meet a long Retry-After), so readiness and pings do not either.
 */
export async function startEngine(
  init: MeasurementInit,
  emit: (event: MeasurementEvent) => void,
  options: EngineOptions,
): Promise<MeasurementEngine> {
  const { checks } = options;
  const log = eventLogger(emit);
  const ledger = await SessionLedger.open(init.config.stateFile);
  ledger.onChange((environment, count) => emit({ type: 'sessions_open', environment, count }));
  ledger.onWritableChange((writable, err) => {
    emit({ type: 'ledger_writable', writable });
    if (writable) log.info({ stateFile: ledger.path }, 'the session ledger is writable again');
    else
      log.error(
        { err, stateFile: ledger.path },
        'cannot write the session ledger; lifecycle runs are skipped until it can be written',
      );
  });
  const onUnrecoverable = (intent: CreateIntent): void => {
    emit({ type: 'session_unrecoverable', environment: intent.environment });
    log.error(unrecoverableFields(intent), UNRECOVERABLE_MESSAGE);
  };

  const lag = startLagSampler({ report: (samplesMs) => emit({ type: 'lag', samplesMs }) });
  // Lag samples while an API call is in flight, none between calls (measurement/lag.ts).
  const stopWatchingCalls = watchCallsInFlight(() => lag.begin());
  const environments = init.config.environments.map(
    (config) =>
      new EnvironmentRuntime(config, {
        checks,
        ledger,
        userAgent: init.userAgent,
        log: withFields(log, { environment: config.name }),
        onUnrecoverable,
      }),
  );
  emit({ type: 'ledger_writable', writable: true });
  try {
    await ledger.checkWritable();
  } catch {
    // Reported by the listener above; pings go on, lifecycle runs wait for a writable ledger.
  }
  // The environments that can have sessions: where a check creates them, and where the ledger
  // held sessions or create intents at start-up (an earlier configuration's, closed or reported
  // by the sweep below). Only these carry the session metrics (docs/metrics.md).
  for (const env of environments) {
    const enabled = checks.filter((check) => env.section(check).enabled);
    if (createsSessions(enabled) || ledger.namedAtOpen.has(env.name))
      emit({ type: 'sessions_open', environment: env.name, count: ledger.count(env.name) });
  }

  const scheduler = new Scheduler({
    environments,
    checks,
    log,
    onResult: (result) => emit({ type: 'result', result }),
    onSkip: (environment, check, reason) => emit({ type: 'skip', environment, check, reason }),
    onAbandon: (environment, check) => emit({ type: 'abandoned', environment, check }),
    onFollowUp: (environment, check, event) =>
      emit({ type: 'follow_up', environment, check, event }),
    ...(options.prepareRun ? { prepare: options.prepareRun } : {}),
  });
  scheduler.start();
  const control = init.config.control
    ? startControlProbe({
        config: init.config.control,
        userAgent: init.userAgent,
        report: ({ result, durationMs }) => emit({ type: 'control', result, durationMs }),
      })
    : null;
  emit({ type: 'ready', schedule: scheduler.schedule, leftoverSessions: 0 });

  const stopSweep = new AbortController();
  const startupSweep = sweepLeftovers(environments, ledger, log, stopSweep.signal);

  return {
    async stop(graceMs: number) {
      stopWatchingCalls();
      lag.stop();
      await control?.stop();
      stopSweep.abort();
      await startupSweep;
      await scheduler.stop(graceMs);
      await Promise.all(environments.map((env) => env.close()));
      ledger.close();
      const open = ledger.list().length;
      if (open > 0)
        log.warn(
          { sessions: open },
          'synthetic sessions still open at exit; the next start closes them',
        );
    },
  };
}

/** The start-up sweep, in the background: adopt what dead processes left and close it. */
async function sweepLeftovers(
  environments: EnvironmentRuntime[],
  ledger: SessionLedger,
  log: CheckLogger,
  signal: AbortSignal,
): Promise<void> {
  await Promise.all(environments.map((env) => env.reaper.sweep({ force: true, signal })));
  const leftovers = ledger.list().length;
  if (leftovers > 0) {
    log.warn(
      { sessions: leftovers },
      'synthetic sessions left open by a previous run are not closed yet; retrying in the background',
    );
  }
}

function eventLogger(emit: (event: MeasurementEvent) => void): CheckLogger {
  const at =
    (level: LogLevel) =>
    (fields: object, msg: string): void =>
      emit({ type: 'log', level, fields: plainFields(fields), msg });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
