/**
 * The check contract. A check is one module (one file in `checks/`, one line in `checks/index.ts`)
 * that declares everything about itself:
 * - its name and its config section (`environments[].<name>`, built with `checkSection`);
 * - its metric definitions and the operations and contract checks it reports;
 * - `run`: its steps, through its context; it returns an outcome and its facts (plain data);
 * - `record`: how its facts become metrics, written through a `MetricSink`;
 * - `summary`: what it adds to its `check --json` document, the trace and `/api/status`.
 * The runner owns timing, deadlines, cleanups and error capture; the generic layers (runner,
 * environment, scheduler, recorder, config, CLI, status) iterate the registry and name no check.
 * Checks import no prom-client, express, pino or node-cron: their context and the sink are all
 * they see.
 */
import type { ApiResponse, ApiTransport, ProxySettings, RequestOptions } from './api.js';
import type { MetricDefinition } from './metric-definition.js';
import type { CheckConfigBase, CheckSection } from './section.js';
import type { ContractCheck, ContractResult, Operation, Outcome } from './vocabulary.js';
import type { z } from 'zod';

/** One request (or one logical step such as the whole polling loop) of a run. */
export interface StepRecord {
  name: string;
  method: string | null;
  path: string | null;
  statusCode: number | null;
  durationMs: number;
  /** The API's `request_id` from an error body: the reference to hand to the API operator. */
  requestId: string | null;
  error: string | null;
}

/**
 * The fields a check adds to its `check --json` document (snake_case keys, bounded values): text,
 * or a number or a yes/no where the document promises one (e.g. days left, verified).
 */
export type Summary = Readonly<Record<string, string | number | boolean | null>>;

/**
 * Measurements the status page shows beside the summary (snake_case keys; `_ms` for durations),
 * e.g. a ping's phases. Small: every retained run keeps them.
 */
export type Details = Readonly<Record<string, number | null>>;

/**
 * How the status page presents a check. Every registered check gets a row of latest results and
 * its failures listed; these add the richer panels, so the page itself names no check.
 */
export interface PageView {
  /**
   * This check's latest run is the environment's headline: up when it passed, and the value of
   * this summary key (a latency class) in colour.
   */
  headline?: { classKey: string };
  /** Chart the runs' durations against the environment's latency thresholds. */
  latencyChart?: boolean;
  /** Show the runs as a timeline whose entries expand to their step trace. */
  timeline?: boolean;
  /**
   * Show how the retained runs spread over the values of a summary key (e.g. qualify outcomes),
   * and the median and maximum of a duration detail (e.g. time to qualify).
   */
  distribution?: { key: string; label: string; durationKey?: string; durationLabel?: string };
}

/** What one run of one check in one environment found. Plain data: it crosses threads. */
export interface CheckResult<Facts = unknown> {
  check: string;
  environment: string;
  outcome: Outcome;
  /** Bounded failure reason, null on pass. */
  reason: string | null;
  /** The check's summary fields (see `Check.summary`). */
  summary: Summary;
  /** The check's measurements for the status page (see `Check.details`); absent when none. */
  details?: Details;
  /** Unix time in ms when the run started. */
  startedAt: number;
  /** How long the run took, less `budgetWaitMs`: the monitor's own pacing is not the API's time. */
  durationMs: number;
  /** How long the run's requests waited for request-budget tokens, ms; absent means none. */
  budgetWaitMs?: number;
  steps: StepRecord[];
  /** What the check found, for its `record`; null when the run ended before the check returned. */
  facts: Facts | null;
  /** Every response received, for `isa_http_responses_total` (code `none` when none came). */
  responses: Array<{ operation: Operation; code: string }>;
  contractChecks: Array<{ check: ContractCheck; result: ContractResult; detail?: string }>;
  /**
   * True for a follow-up run (see `FollowUp`), e.g. a confirmation ping: recorded only in the
   * check's follow-up metrics, so every series of scheduled runs keeps counting scheduled runs.
   */
  followUp?: boolean;
}

/** The small logger a check sees; the daemon backs it with pino on the main thread. */
export interface CheckLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** The environment-wide settings a check may read: never the API key or its source. */
export interface CheckEnvironment {
  name: string;
  /**
   * The environment's `base_url`, for a check that looks at the endpoint itself rather than
   * through the API (the certificate it presents).
   */
  baseUrl: string;
  /** PEM certificates `ca_file` adds to the system's for this environment; empty without one. */
  extraTrust: readonly string[];
  /** The latency guidance of the API (expected, warning, critical), in ms. */
  thresholds: { expectedMs: number; warningMs: number; criticalMs: number };
  /**
   * The egress proxy every connection of the environment goes through (absent: direct). A check
   * that opens its own connection (the certificate check) uses it; its password is a secret.
   */
  proxy?: ProxySettings;
  /** The client certificate's files (`client_cert_file`, `client_key_file`), if any. */
  clientCertificate?: { certFile: string; keyFile: string };
}

/** The context a check runs in. Everything it touches comes through here. */
export interface CheckContext<Config extends CheckConfigBase = CheckConfigBase> {
  /** This check's own config section; no other check's settings. */
  config: Config;
  environment: CheckEnvironment;
  client: ApiTransport;
  signal: AbortSignal;
  log: CheckLogger;
  /** Per-run correlation id, sent with every request of the run. */
  correlationId: string;
  /** Waits for a request-budget token; rejects when the signal aborts. */
  acquireBudget(): Promise<void>;
  /** Sleeps on the monotonic clock; rejects when the signal aborts. */
  sleep(ms: number): Promise<void>;
  /**
   * Records a response: step record, http response counter. `name` is the metric's step label.
   * An HTTP status >= 400 is the step's error unless `expectedStatus` accepts it (a refusal the
   * check asked for).
   */
  step(
    name: string,
    response: ApiResponse,
    expectedStatus?: (statusCode: number) => boolean,
  ): StepRecord;
  contract(check: ContractCheck, result: ContractResult, detail?: string): void;
  /** Registers work that always runs after the check, even after failures, timeouts and aborts. */
  cleanup(fn: () => Promise<void>): void;
  /** The session ledger: tokens written before the create call returns, removed on confirmed close. */
  sessions: SessionTracker;
  /**
   * The synthetic sessions this environment's checks created (every token given to `sessions`),
   * for checks that follow them elsewhere in the API; `createdAt` is on the `now()` clock.
   */
  createdSessions: CreatedSessions;
  /**
   * The object this check keeps in this environment from one run to the next (memory only),
   * made by `init` on first use: e.g. the time of the last successful sync.
   */
  retained<T extends object>(init: () => T): T;
  /** Monotonic milliseconds (not wall time), for durations. */
  now(): number;
  /** How many runs of this check in this environment came before this one (e.g. rotation). */
  runNumber: number;
}

/**
 * Who a request is for. `first`: a run whose timing is its measurement (a ping, a confirmation
 * ping), served before every queued `normal` request, and kept clear by `reserve`. `normal`:
 * everything else (lifecycle steps and polls, the other checks, closing leftovers).
 */
export type BudgetPriority = 'first' | 'normal';

/** One created session. */
export interface CreatedSession {
  /** Increases by one per entry: a reader keeps the last `seq` it took as its cursor. */
  seq: number;
  token: string;
  /**
   * The `campaign_id` the create was sent with (null: none): what the API must report for the
   * session, whatever any other setting says.
   */
  campaignId: string | null;
  /** When it was journaled, on the runner's monotonic clock (ms). */
  createdAt: number;
}

/** What a check's context sees of the journal. */
export interface CreatedSessions {
  /** The entries after `seq` (0: every entry still kept), oldest first. */
  since(seq: number): CreatedSession[];
}

export interface SessionTracker {
  /**
   * Sends `POST /sessions`: an intent is on disk first (rejects without sending when it cannot be
   * written), and every token of the answer, whatever its status, is on disk before this resolves
   * (`durable` is false when that write failed; the tokens are closed anyway). An answer after
   * the deadline is still read and its sessions closed (see `sessions/tracker.ts`). `admit` runs
   * between the intent write and the send (the request budget and Retry-After gate); when it
   * rejects, nothing is sent, the intent is removed and the rejection is passed on.
   */
  create(
    body: Record<string, unknown>,
    options: RequestOptions,
    admit?: () => Promise<void>,
  ): Promise<{ response: ApiResponse; tokens: string[]; durable: boolean }>;
  /**
   * Records a created session token durably (before anything else happens with it), with the
   * `campaign_id` it was created with (null: none).
   */
  opened(token: string, campaignId: string | null): Promise<void>;
  /** Forgets a token after the API confirmed the close (or 410). */
  closed(token: string): Promise<void>;
  /** The run is done with a token it could not close: the reaper may take it over. */
  release(token: string): void;
}

/** What a check's `run` returns; the runner adds timing and the common fields. */
export interface CheckOutcome<Facts> {
  outcome: Outcome;
  reason: string | null;
  facts: Facts;
}

type Labels<D extends MetricDefinition> = {
  [L in Exclude<D['labels'][number], 'environment'>]: string;
};

/**
 * The narrow interface a check writes its metrics through. `environment` is added by the sink;
 * a definition the check did not declare is refused.
 */
export interface MetricSink {
  inc<D extends MetricDefinition>(metric: D, labels: Labels<D>, value?: number): void;
  set<D extends MetricDefinition>(metric: D, labels: Labels<D>, value: number): void;
  observe<D extends MetricDefinition>(metric: D, labels: Labels<D>, value: number): void;
  /** Sets `metric` to `value` at `labels` and removes the environment's other series of it. */
  setOnly<D extends MetricDefinition>(metric: D, labels: Labels<D>, value: number): void;
}

/**
 * What a check adds to `isa-monitor check <name> --base-url URL ...`: its own options (strings),
 * their usage lines, and the config section they make (or the problem with them).
 */
export interface AdHocOptions {
  options: Readonly<Record<string, { type: 'string' }>>;
  /** Usage lines, already indented and wrapped like the other options of `check --help`. */
  usage: string;
  section(
    values: Readonly<Record<string, string | undefined>>,
  ): { section: Record<string, unknown> } | { problem: string };
}

/** How a check's follow-up sequence runs, from its config (see `FollowUp`). */
export interface FollowUpPolicy {
  /** Time between follow-up runs. */
  intervalMs: number;
  /** The sequence ends this long after the last scheduled run that started or restarted it. */
  windowMs: number;
  /** The sequence ends after this many good follow-up runs in a row. */
  successes: number;
}

/** How a follow-up sequence ended: satisfied, out of time, or the monitor stopped. */
export const FOLLOW_UP_ENDS = ['recovered', 'window_elapsed', 'stopped'] as const;
export type FollowUpEnd = (typeof FOLLOW_UP_ENDS)[number];

/** A sequence event, for the check's sequence metrics. */
export type FollowUpEvent = { type: 'started' } | { type: 'ended'; end: FollowUpEnd };

/**
 * Follow-up runs: a scheduled run whose result `starts` one begins a sequence of extra runs of the
 * same check, every `policy.intervalMs`, until `policy.successes` of them in a row are `good` or
 * `policy.windowMs` has passed since the last scheduled run that started it (another such run
 * restarts the window). They take request-budget tokens, honour Retry-After, never overlap a run
 * of the same check in the environment, and are skipped (never queued) when they cannot be served.
 * Without a starting result they make no request at all. Their results are recorded by `record`
 * into metrics of their own, listed in `metrics` and zero-initialised only while the policy is on.
 */
export interface FollowUp<Config, Facts> {
  /** The policy in this config, or null when follow-up runs are off. */
  policy(config: Config): FollowUpPolicy | null;
  /** True when a scheduled run with these facts starts (or restarts) a sequence. */
  starts(facts: Facts | null): boolean;
  /** True when a follow-up run with these facts counts towards `successes`. */
  good(facts: Facts | null): boolean;
  /** The follow-up metrics (also in the check's `metrics`, so its sink accepts them). */
  metrics: readonly MetricDefinition[];
  /** Writes one follow-up run's facts. */
  record(facts: Facts, sink: MetricSink, times: RunTimes): void;
  /** Writes a sequence's start or end. */
  recordSequence(event: FollowUpEvent, sink: MetricSink): void;
  /** Sets the follow-up metrics' starting values where the policy is on (e.g. "not active"). */
  describe?(sink: MetricSink): void;
}

/** When a run happened, for the metrics that record a time. */
export interface RunTimes {
  /** Unix ms. */
  startedAt: number;
  finishedAt: number;
}

/**
 * One API operation of a check: the codes its endpoint documents (the API's spec, endpoint by
 * endpoint, plus 401, 429 and 500, which every endpoint may answer, and `none`: no response), so
 * a first rejected key, rate limit or server failure shows in `increase()` wherever it happens.
 * Any other code appears when it is first seen.
 */
export interface OperationSpec {
  codes: readonly string[];
  /** The schema of its successful answer, when the spec gives one. */
  response?: z.ZodType;
  /**
   * Its answer is the list of the providers the API tracks, which contract drift compares across
   * environments: added, removed, renamed (docs/drift.md, "Sandbox against production").
   */
  listsProviders?: true;
}

export interface Check<
  Name extends string = string,
  Config extends CheckConfigBase = CheckConfigBase,
  Facts = unknown,
  Metrics extends Record<string, MetricDefinition> = Record<string, MetricDefinition>,
> {
  name: Name;
  config: CheckSection<Config>;
  /** The check's own metrics (keys are unique across checks). */
  metrics: Metrics;
  /**
   * The API operations its requests are labelled with (`operation`), each with the status codes
   * its endpoint documents and its successful answer's schema: `isa_http_responses_total` starts
   * at 0 for these codes while the check is enabled, and the schema is what contract drift holds
   * the answers to (docs/metrics.md; docs/drift.md). Empty for a check that calls no endpoint.
   */
  operations: Readonly<Record<Operation, OperationSpec>>;
  /** The contract checks it reports, zero-initialised while it is enabled. */
  contractChecks: readonly ContractCheck[];
  /**
   * True when the check creates synthetic sessions: the session reaper sweeps only while no such
   * check is running, so it never closes a session a run still owns.
   */
  createsSessions?: boolean;
  /**
   * `first` when the run's timing is its measurement (the ping): its requests go before every
   * other check's queued requests in the environment's request budget, and the scheduler
   * reserves the budget for its due times, so a ping that comes due during a lifecycle run is not
   * held back
   * by the lifecycle's polls. Default `normal`.
   */
  budgetPriority?: BudgetPriority;
  /**
   * True when a run is one request that the check's own metrics already count and time: the
   * ping's, counted by `isa_ping_attempts_total` (its result `ok` exactly when the run passes)
   * and timed by `isa_ping_duration_seconds`. Then `isa_check_runs_total` and
   * `isa_check_duration_seconds` have no series of the check: they would be second copies of the
   * same figures, 17 samples per environment. Default false.
   */
  ownRunMetrics?: boolean;
  /** The keys `summary` may return, each null in other checks' documents (a stable JSON shape). */
  summaryKeys: readonly string[];
  run(ctx: CheckContext<Config>): Promise<CheckOutcome<Facts>>;
  /** Fields for `check --json`, the trace and `/api/status`; also for a run without facts. */
  summary(facts: Facts | null): Summary;
  /** Facts for the last line of the `check` trace, e.g. `latency expected`. */
  trace(facts: Facts | null): string[];
  /** Measurements for the status page and its history (e.g. phases); none when absent. */
  details?(facts: Facts | null): Details;
  /** How the status page presents the check (see `PageView`); a plain row when absent. */
  page?: PageView;
  /**
   * This check's scheduled runs are the environment's availability record: the days, uptime,
   * incidents and badges of `/api/uptime` (docs/metrics.md). A run counts as failed when its
   * reason is one of `failures`; a failure for another reason (our key rejected, our rate
   * limited) counts as a run, not as the API failing. At most one check of a build has it.
   */
  availability?: { failures: readonly string[] };
  /**
   * False for a check that sends no API request (it looks at the endpoint itself): `check <name>
   * --base-url URL` then needs no API key. Default true.
   */
  usesApiKey?: boolean;
  /** Options of `check <name> --base-url ...`, which builds a one-environment config. */
  adHoc?: AdHocOptions;
  /** Writes the facts of one run as metrics. */
  record(facts: Facts, sink: MetricSink, times: RunTimes): void;
  /** Sets the check's configuration gauges at start-up (e.g. configured thresholds). */
  describeConfig?(config: Config, environment: CheckEnvironment, sink: MetricSink): void;
  /** Extra runs that a worrying scheduled result starts (see `FollowUp`). */
  followUp?: FollowUp<Config, Facts>;
}

/** Any registered check, for the generic layers. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCheck = Check<string, any, any, Record<string, MetricDefinition>>;

/** Declares a check with its types inferred (the registry keeps the literal types). */
export function defineCheck<
  Name extends string,
  Config extends CheckConfigBase,
  Facts,
  Metrics extends Record<string, MetricDefinition>,
>(check: Check<Name, Config, Facts, Metrics>): Check<Name, Config, Facts, Metrics> {
  return check;
}

/** True for a value that is a check module (used by the registry test). */
export function isCheck(value: unknown): value is AnyCheck {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<AnyCheck>;
  return (
    typeof v.name === 'string' && typeof v.run === 'function' && typeof v.record === 'function'
  );
}

/**
 * Whether any of `checks` creates synthetic sessions: where an environment's session ledger
 * entries and its session metrics can be other than empty.
 */
export function createsSessions(checks: readonly AnyCheck[]): boolean {
  return checks.some((check) => check.createsSessions === true);
}

/**
 * The summary keys of `checks`, each once, in their order: every check's document carries them
 * all (null where another check's), so the JSON shape is the same for every check.
 */
export function summaryKeysOf(checks: readonly AnyCheck[]): readonly string[] {
  return [...new Set(checks.flatMap((check) => check.summaryKeys))];
}

/**
 * The schema of each operation's successful answer, from the checks that call it
 * (`Check.operations`): what contract drift holds each operation's answers to (docs/drift.md).
 */
export function responseSchemasOf(
  checks: readonly AnyCheck[],
): Readonly<Record<string, z.ZodType>> {
  return Object.fromEntries(
    checks.flatMap((check) =>
      Object.entries(check.operations).flatMap(([operation, spec]) =>
        spec.response === undefined ? [] : [[operation, spec.response] as const],
      ),
    ),
  );
}

/** The operations whose answer is the provider list (`OperationSpec.listsProviders`). */
export function providerListOperations(checks: readonly AnyCheck[]): ReadonlySet<string> {
  return new Set(
    checks.flatMap((check) =>
      Object.entries(check.operations).flatMap(([operation, spec]) =>
        spec.listsProviders ? [operation] : [],
      ),
    ),
  );
}
