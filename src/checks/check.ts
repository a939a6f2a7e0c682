/**
 * The check interface and the Result every run produces. A check only does its steps through its
 * context; the runner times it, classifies failures and hands the Result to the recorder (metrics,
 * status history, logs). Results are plain data: they cross from the measurement worker to the
 * main thread as structured-clone messages.
 */
import type { ApiClient, ApiResponse, PhaseTimings, RequestOptions } from '../api/client.js';
import type { EnvironmentConfig } from '../config/index.js';
import type {
  CheckName,
  ContractCheck,
  ContractResult,
  LatencyClass,
  LifecycleResult,
  LifecycleStep,
  Operation,
  PingResult,
  QualifyOutcome,
} from './results.js';
import type { QualifyStatus } from '../api/schemas.js';

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

export interface PingFacts {
  result: PingResult;
  durationMs: number;
  phases: PhaseTimings;
  up: boolean;
}

export interface LifecycleFacts {
  result: LifecycleResult;
  qualifyOutcome: QualifyOutcome | null;
  qualifyDurationMs: number | null;
  stepDurationsMs: Partial<Record<LifecycleStep, number>>;
  /** qualify_status of the creation response and of every poll, in order. */
  pollStatuses: QualifyStatus[];
  serviceDataSet: string | null;
}

/** What one run of one check in one environment found. The shape of `check --json`. */
export interface CheckResult {
  check: CheckName;
  environment: string;
  outcome: 'pass' | 'fail';
  /** Bounded failure reason (a ping or lifecycle result other than ok/success), null on pass. */
  reason: string | null;
  latencyClass: LatencyClass | null;
  qualifyStatus: QualifyOutcome | null;
  /** Unix time in ms when the run started. */
  startedAt: number;
  durationMs: number;
  steps: StepRecord[];
  ping?: PingFacts;
  lifecycle?: LifecycleFacts;
  /** Every response received, for `isa_http_responses_total` (code `none` when none came). */
  responses: Array<{ operation: Operation; code: string }>;
  contractChecks: Array<{ check: ContractCheck; result: ContractResult; detail?: string }>;
}

/** The small logger a check sees; the daemon backs it with pino on the main thread. */
export interface CheckLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** The context a check runs in. Everything it touches comes through here. */
export interface CheckContext {
  environment: EnvironmentConfig;
  client: ApiClient;
  signal: AbortSignal;
  log: CheckLogger;
  /** Per-run correlation id, sent with every request of the run. */
  correlationId: string;
  /** Waits for a request-budget token; rejects when the signal aborts. */
  acquireBudget(): Promise<void>;
  /** Sleeps on the monotonic clock; rejects when the signal aborts. */
  sleep(ms: number): Promise<void>;
  /** Records a response: step record, http response counter, contract facts. */
  step(name: string, response: ApiResponse): StepRecord;
  contract(check: ContractCheck, result: ContractResult, detail?: string): void;
  /** Registers work that always runs after the check, even after failures, timeouts and aborts. */
  cleanup(fn: () => Promise<void>): void;
  /** The session ledger: tokens written before the create call returns, removed on confirmed close. */
  sessions: SessionTracker;
  /** Monotonic milliseconds (not wall time), for durations. */
  now(): number;
  /** How many runs of this check in this environment came before this one (address rotation). */
  runNumber: number;
}

export interface SessionTracker {
  /**
   * Sends `POST /sessions`: an intent is on disk first (rejects without sending when it cannot be
   * written), and every token of the answer, whatever its status, is on disk before this resolves
   * (`durable` is false when that write failed; the tokens are closed anyway). An answer after
   * the deadline is still read and its sessions closed (see `sessions/tracker.ts`).
   */
  create(
    body: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<{ response: ApiResponse; tokens: string[]; durable: boolean }>;
  /** Records a created session token durably (before anything else happens with it). */
  opened(token: string): Promise<void>;
  /** Forgets a token after the API confirmed the close (or 410). */
  closed(token: string): Promise<void>;
  /** The run is done with a token it could not close: the reaper may take it over. */
  release(token: string): void;
}

/** What a check returns: its part of the Result; the runner adds timing and the common fields. */
export interface CheckOutcome {
  outcome: 'pass' | 'fail';
  reason: string | null;
  latencyClass?: LatencyClass | null;
  qualifyStatus?: QualifyOutcome | null;
  ping?: PingFacts;
  lifecycle?: LifecycleFacts;
}

export interface Check {
  name: CheckName;
  run(ctx: CheckContext): Promise<CheckOutcome>;
}
