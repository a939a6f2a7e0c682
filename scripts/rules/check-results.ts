/**
 * What a scenario's events mean to the monitor: each minute's ping or lifecycle event becomes the
 * CheckResult a real run would have produced, handed to the daemon's real Recorder at the moment
 * the run finished. This is the only part of the rule-test generator that knows the shape of a
 * check result; everything after it (recording, rendering, encoding) reads what the recorder wrote.
 *
 * Time model: the scenario starts at Unix time 0. The ping of minute m starts at m·60 + 1 s and
 * finishes after its duration; a lifecycle run of minute m finishes at m·60 + 50 s. Sessions open
 * are set at the start of each minute.
 */
import { analyticsCheck, type AnalyticsFacts } from '../../src/checks/analytics/index.js';
import type { CheckResult } from '../../src/kernel/check.js';
import {
  COVERAGE_RESULTS,
  coverageCheck,
  type CoverageFacts,
  type CoverageResult,
} from '../../src/checks/coverage/index.js';
import { providersCheck, type ProvidersFacts } from '../../src/checks/providers/index.js';
import {
  LIFECYCLE_RESULTS,
  lifecycleCheck,
  type LifecycleFacts,
  type LifecycleResult,
  type QualifyOutcome,
} from '../../src/checks/lifecycle/index.js';
import {
  CONFIRM_TRIGGER_RESULTS,
  pingCheck,
  type PingFacts,
  type PingResult,
} from '../../src/checks/ping/index.js';
import {
  formatProblems,
  validateConfigDocument,
  type EnvironmentConfig,
} from '../../src/config/index.js';
import type { Recorder } from '../../src/metrics/recorder.js';
import type { ContractResult } from '../../src/kernel/vocabulary.js';
import { confirmEvents, type PingOutcome, type ScheduledPing } from './confirm-sequence.js';
import { NO_EVENT, expandTimeline, type EnvironmentSpec } from './scenarios.js';
import { CHECK_LIST } from '../../src/checks/index.js';

/** What one ping event is: its result, how long it took (timeouts at elapsed time), its status. */
export const PING_EVENTS: Readonly<
  Record<string, { result: PingResult; seconds: number; code: string }>
> = {
  ok: { result: 'ok', seconds: 0.05, code: '200' },
  slow_elevated: { result: 'ok', seconds: 0.3, code: '200' },
  slow_warning: { result: 'ok', seconds: 0.7, code: '200' },
  slow_critical: { result: 'ok', seconds: 2, code: '200' },
  // The 10 s timeout fires a little after 10 s, like the real thing: below the le="30" bound.
  timeout: { result: 'timeout', seconds: 10.001, code: 'none' },
  server_error: { result: 'server_error', seconds: 0.05, code: '500' },
  network_error: { result: 'network_error', seconds: 0.005, code: 'none' },
  unauthorized: { result: 'unauthorized', seconds: 0.05, code: '401' },
  rate_limited: { result: 'rate_limited', seconds: 0.05, code: '429' },
  unexpected_status: { result: 'unexpected_status', seconds: 0.05, code: '404' },
  invalid_body: { result: 'invalid_body', seconds: 0.05, code: '200' },
};

/**
 * What the lifecycle check finds on the way to each result: the final qualify status (null when
 * the run ended before one was known) and the closed-session check (null when no close was
 * confirmed, so nothing was verified). These are the check's facts, not its metrics.
 */
const LIFECYCLE_FACTS: Readonly<
  Record<LifecycleResult, { qualify: QualifyOutcome | null; closedGone: ContractResult | null }>
> = {
  success: { qualify: 'available', closedGone: 'pass' },
  create_failed: { qualify: null, closedGone: null },
  qualify_failed: { qualify: 'failed', closedGone: 'pass' },
  qualify_timeout: { qualify: 'timeout', closedGone: 'pass' },
  unexpected_outcome: { qualify: 'no_service', closedGone: 'pass' },
  close_failed: { qualify: 'available', closedGone: null },
  not_gone_after_close: { qualify: 'available', closedGone: 'fail' },
  unauthorized: { qualify: null, closedGone: null },
  rate_limited: { qualify: null, closedGone: null },
  address_validation_unavailable: { qualify: null, closedGone: null },
  budget: { qualify: null, closedGone: null },
  error: { qualify: null, closedGone: null },
};

const LIFECYCLE_SECONDS = 20;

/**
 * An analytics run's ingest findings: `ok` (nothing new late or missing), `late` (a session became
 * late), `missing` (a session was given up), `late+missing` (both).
 */
const ANALYTICS_EVENTS: Readonly<Record<string, { late: number; missing: number }>> = {
  ok: { late: 0, missing: 0 },
  late: { late: 1, missing: 0 },
  missing: { late: 0, missing: 1 },
  'late+missing': { late: 1, missing: 1 },
};

const ANALYTICS_SECONDS = 5;
const REFERENCE_SECONDS = 1;

/** Something the daemon records at scenario second `at`. */
export interface RecordedEvent {
  at: number;
  record(recorder: Recorder): void;
}

/**
 * The configuration of the scenario's environments (thresholds, ping interval), built by the
 * daemon's own config validation so the configuration gauges are what a config file would give.
 */
export function environmentConfigs(
  environments: Readonly<Record<string, EnvironmentSpec>>,
): EnvironmentConfig[] {
  const ms = (seconds: number) => `${Math.round(seconds * 1000)}ms`;
  const loaded = validateConfigDocument(
    {
      environments: Object.entries(environments).map(([name, spec]) => {
        const t = spec.thresholds;
        return {
          name,
          base_url: 'http://127.0.0.1:1',
          api_key_env: 'ISA_RULE_TEST_KEY',
          ...(t && {
            thresholds: {
              expected: ms(t.expected),
              warning: ms(t.warning),
              critical: ms(t.critical),
            },
          }),
          // Confirmation pings only where the scenario says what the API answers them.
          ping: {
            interval: ms(spec.interval ?? 60),
            confirm: { enabled: spec.confirm !== undefined },
          },
          // Lifecycle runs are synthetic here; the check only needs a valid section.
          lifecycle: { addresses: [{ street1: '2 Pending Ave', zip: '80202' }] },
          // Off by default, as in a config file: on only where the scenario has its timeline.
          analytics: { enabled: spec.analytics !== undefined },
          // The reference checks too: their series exist only where the scenario has a timeline.
          providers: { enabled: spec.providers !== undefined },
          coverage: { enabled: spec.coverage !== undefined },
        };
      }),
    },
    { checks: CHECK_LIST, env: { ISA_RULE_TEST_KEY: 'rule-test-key' } },
  );
  if (!loaded.ok) throw new Error(`scenario environments: ${formatProblems(loaded.problems)}`);
  return loaded.config.environments;
}

/** Every event of one environment's timelines, as the recorder would receive it. */
export function environmentEvents(
  environment: string,
  spec: EnvironmentSpec,
  minutes: number,
): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  const scheduled: Array<ScheduledPing & { ping: (typeof PING_EVENTS)[string] }> = [];
  const critical = spec.thresholds?.critical ?? 1;
  // The daemon sets the gauge at a window's edges; a scenario's windows start and end on minutes.
  if (spec.maintenance !== undefined) {
    expandTimeline(spec.maintenance, minutes, '0').forEach((v, m) => {
      if (v !== '0' && v !== '1') throw new Error(`maintenance must be 1 or 0, got "${v}"`);
      events.push({ at: m * 60, record: (r) => r.setMaintenanceActive(environment, v === '1') });
    });
  }
  expandTimeline(spec.ping ?? '', minutes, 'ok').forEach((event, m) => {
    const ping = pingEvent(event);
    if (!ping) return;
    const start = m * 60 + 1;
    const result = pingResult(environment, ping, start);
    events.push({ at: start + ping.seconds, record: (r) => r.recordResult(result) });
    scheduled.push({ start, ping, ...outcome(ping, critical) });
  });
  if (spec.confirm !== undefined) {
    events.push(...confirmationEvents(environment, spec.confirm, scheduled, critical, minutes));
  }
  expandTimeline(spec.lifecycle ?? '', minutes, NO_EVENT).forEach((event, m) => {
    const outcome = lifecycleEvent(event);
    if (!outcome) return;
    const finish = m * 60 + 50;
    const result = lifecycleResult(environment, outcome, finish - LIFECYCLE_SECONDS);
    events.push({ at: finish, record: (r) => r.recordResult(result) });
  });
  // An analytics run of minute m finishes at m·60 + 30 s.
  expandTimeline(spec.analytics ?? '', minutes, NO_EVENT).forEach((event, m) => {
    const found = analyticsEvent(event);
    if (!found) return;
    const finish = m * 60 + 30;
    const result = analyticsResult(environment, found, finish - ANALYTICS_SECONDS);
    events.push({ at: finish, record: (r) => r.recordResult(result) });
  });
  // A provider-list fetch of minute m finishes at m·60 + 30 s and lists that many providers.
  expandTimeline(spec.providers ?? '', minutes, NO_EVENT).forEach((event, m) => {
    if (event === NO_EVENT) return;
    const n = wholeNumber('providers', event, ' or -');
    const result = providersResult(environment, n, m * 60 + 30 - REFERENCE_SECONDS);
    events.push({ at: m * 60 + 30, record: (r) => r.recordResult(result) });
  });
  // A coverage run of minute m finishes at m·60 + 40 s with the given result.
  expandTimeline(spec.coverage ?? '', minutes, NO_EVENT).forEach((event, m) => {
    if (event === NO_EVENT) return;
    if (!(COVERAGE_RESULTS as readonly string[]).includes(event)) {
      throw new Error(
        `unknown coverage event "${event}"; known: ${COVERAGE_RESULTS.join(', ')}, -`,
      );
    }
    const found = event as CoverageResult;
    const result = coverageResult(environment, found, m * 60 + 40 - REFERENCE_SECONDS);
    events.push({ at: m * 60 + 40, record: (r) => r.recordResult(result) });
  });
  expandTimeline(spec.sessions ?? '', minutes, '0').forEach((v, m) => {
    const n = wholeNumber('sessions', v);
    events.push({ at: m * 60, record: (r) => r.setSessionsOpen(environment, n) });
  });
  expandTimeline(spec.unrecoverable ?? '', minutes, '0').forEach((v, m) => {
    const n = wholeNumber('unrecoverable', v);
    if (n > 0)
      events.push({ at: m * 60 + 50, record: (r) => r.recordUnrecoverable(environment, n) });
  });
  return events;
}

/** How the paging rules see a ping event: slow, failed, and how long it ran. */
function outcome(ping: (typeof PING_EVENTS)[string], critical: number): PingOutcome {
  return {
    slow: ping.seconds > critical,
    failed: (CONFIRM_TRIGGER_RESULTS as readonly string[]).includes(ping.result),
    seconds: ping.seconds,
  };
}

/**
 * The confirmation pings and sequence events the daemon's policy makes of the scheduled pings,
 * each confirmation ping answered by the event of its 10-second slot in `slots`.
 */
function confirmationEvents(
  environment: string,
  slots: string,
  scheduled: ReadonlyArray<ScheduledPing>,
  critical: number,
  minutes: number,
): RecordedEvent[] {
  const answers = expandTimeline(slots, minutes * 6, 'ok');
  const answer = (t: number) => {
    const ping = pingEvent(answers[Math.floor(t / 10)] ?? 'ok') ?? PING_EVENTS['ok'];
    if (!ping) throw new Error('no ok ping event');
    return { ...outcome(ping, critical), ping };
  };
  const events: RecordedEvent[] = [];
  for (const e of confirmEvents(scheduled, answer)) {
    if (e.kind === 'ping') {
      if (e.start >= minutes * 60) continue;
      const result = { ...pingResult(environment, e.outcome.ping, e.start), followUp: true };
      events.push({ at: e.start + e.outcome.seconds, record: (r) => r.recordResult(result) });
    } else {
      const event =
        e.kind === 'started'
          ? ({ type: 'started' } as const)
          : ({ type: 'ended', end: e.end } as const);
      events.push({
        at: e.at,
        record: (r) => r.recordFollowUp(environment, pingCheck.name, event),
      });
    }
  }
  return events;
}

/** The control probe's results, one per minute at m:30: 1 (ok), 0 (a timeout) or `-`. */
export function controlEvents(control: string | undefined, minutes: number): RecordedEvent[] {
  if (control === undefined) return [];
  return expandTimeline(control, minutes, NO_EVENT).flatMap((v, m) => {
    if (v === NO_EVENT) return [];
    if (v !== '0' && v !== '1') throw new Error(`control must be 1, 0 or -, got "${v}"`);
    const at = m * 60 + 30;
    return [
      {
        at,
        record: (r: Recorder) =>
          v === '1' ? r.recordControlProbe('ok', 50) : r.recordControlProbe('timeout', 5000),
      },
    ];
  });
}

/** The monitor-wide events of a scenario: the session ledger's writability per minute. */
export function monitorEvents(ledger: string | undefined, minutes: number): RecordedEvent[] {
  return expandTimeline(ledger ?? '', minutes, '1').map((v, m) => {
    if (v !== '0' && v !== '1') throw new Error(`ledger must be 1 or 0, got "${v}"`);
    return { at: m * 60, record: (r: Recorder) => r.setLedgerWritable(v === '1') };
  });
}

/** A timeline value that must be a whole number; `also` names what else the key accepts. */
function wholeNumber(key: string, value: string, also = ''): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new Error(`${key} must be whole numbers${also}, got "${value}"`);
  }
  return n;
}

/** A ping event's result and duration; `ok@0.6` overrides the duration of a named event. */
function pingEvent(event: string): (typeof PING_EVENTS)[string] | null {
  if (event === NO_EVENT) return null;
  const [name = '', override] = event.split('@');
  const known = PING_EVENTS[name];
  if (!known)
    throw new Error(
      `unknown ping event "${event}"; known: ${Object.keys(PING_EVENTS).join(', ')}, -`,
    );
  if (override === undefined) return known;
  const seconds = Number(override);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new Error(`bad duration in ping event "${event}"`);
  return { ...known, seconds };
}

function analyticsEvent(event: string): { late: number; missing: number } | null {
  if (event === NO_EVENT) return null;
  const known = ANALYTICS_EVENTS[event];
  if (!known) {
    throw new Error(
      `unknown analytics event "${event}"; known: ${Object.keys(ANALYTICS_EVENTS).join(', ')}, -`,
    );
  }
  return known;
}

function lifecycleEvent(event: string): LifecycleResult | null {
  if (event === NO_EVENT) return null;
  if (!(LIFECYCLE_RESULTS as readonly string[]).includes(event)) {
    throw new Error(
      `unknown lifecycle event "${event}"; known: ${LIFECYCLE_RESULTS.join(', ')}, -`,
    );
  }
  return event as LifecycleResult;
}

function pingResult(
  environment: string,
  ping: (typeof PING_EVENTS)[string],
  startSeconds: number,
): CheckResult<PingFacts> {
  const ok = ping.result === 'ok';
  const durationMs = Math.round(ping.seconds * 1000);
  const facts: PingFacts = {
    result: ping.result,
    durationMs,
    phases: {},
    // No phases are simulated, so no connection is measured as opened either.
    connectionOpened: false,
    up: ok,
    latencyClass: null,
  };
  return {
    check: pingCheck.name,
    environment,
    outcome: ok ? 'pass' : 'fail',
    reason: ok ? null : ping.result,
    summary: pingCheck.summary(facts),
    startedAt: startSeconds * 1000,
    durationMs,
    steps: [],
    facts,
    responses: [{ operation: 'ping', code: ping.code }],
    contractChecks: [],
  };
}

function lifecycleResult(
  environment: string,
  result: LifecycleResult,
  startSeconds: number,
): CheckResult<LifecycleFacts> {
  const found = LIFECYCLE_FACTS[result];
  const facts: LifecycleFacts = {
    result,
    qualifyOutcome: found.qualify,
    qualifyDurationMs: null,
    stepDurationsMs: {},
    pollStatuses: [],
    serviceDataSet: null,
  };
  return {
    check: lifecycleCheck.name,
    environment,
    outcome: result === 'success' ? 'pass' : 'fail',
    reason: result === 'success' ? null : result,
    summary: lifecycleCheck.summary(facts),
    startedAt: startSeconds * 1000,
    durationMs: LIFECYCLE_SECONDS * 1000,
    steps: [],
    facts,
    responses: [],
    contractChecks:
      found.closedGone === null ? [] : [{ check: 'closed_session_gone', result: found.closedGone }],
  };
}

function analyticsResult(
  environment: string,
  found: { late: number; missing: number },
  startSeconds: number,
): CheckResult<AnalyticsFacts> {
  const facts: AnalyticsFacts = {
    result: found.missing > 0 ? 'sessions_missing' : 'success',
    pages: 1,
    rows: 0,
    syncDurationMs: 100,
    syncSucceeded: true,
    ingestLagsMs: [],
    late: found.late,
    missing: found.missing,
    awaiting: 0,
    oldestAwaitingMs: 0,
  };
  return {
    check: analyticsCheck.name,
    environment,
    outcome: facts.result === 'success' ? 'pass' : 'fail',
    reason: facts.result === 'success' ? null : facts.result,
    summary: analyticsCheck.summary(facts),
    startedAt: startSeconds * 1000,
    durationMs: ANALYTICS_SECONDS * 1000,
    steps: [],
    facts,
    responses: [],
    contractChecks: [],
  };
}

/** A provider-list fetch that listed `n` providers, all counted as FCC providers. */
function providersResult(
  environment: string,
  n: number,
  startSeconds: number,
): CheckResult<ProvidersFacts> {
  const facts: ProvidersFacts = {
    result: n === 0 ? 'empty' : 'ok',
    counts: { fcc_provider: n, supplemental_brand: 0 },
    listHash: null,
    changed: false,
    violation: null,
  };
  return referenceResult(environment, providersCheck, facts, startSeconds);
}

function coverageResult(
  environment: string,
  result: CoverageResult,
  startSeconds: number,
): CheckResult<CoverageFacts> {
  const facts: CoverageFacts = {
    result,
    providers: null,
    matchedAreasViolation: null,
    refusalStatus: null,
  };
  return referenceResult(environment, coverageCheck, facts, startSeconds);
}

function referenceResult<F extends { result: string }>(
  environment: string,
  check: { name: string; summary(facts: F | null): CheckResult['summary'] },
  facts: F,
  startSeconds: number,
): CheckResult<F> {
  const ok = facts.result === 'ok';
  return {
    check: check.name,
    environment,
    outcome: ok ? 'pass' : 'fail',
    reason: ok ? null : facts.result,
    summary: check.summary(facts),
    startedAt: startSeconds * 1000,
    durationMs: REFERENCE_SECONDS * 1000,
    steps: [],
    facts,
    responses: [],
    contractChecks: [],
  };
}
