/**
 * Contract drift on the measurement thread (docs/drift.md): every API response of every
 * environment goes to one `DriftBook`, kept beside the session ledger, and the drift document
 * (`drift/report.ts`) goes to the main thread as a `contract_drift` event when it changes, looked
 * at every 5 s too (differences between environments come and become lasting without any
 * difference of an operation changing). A book that cannot
 * be read is set aside and learning starts again; one that cannot be written is logged: neither
 * stops the engine.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ApiResponse } from '../kernel/api.js';
import type { CheckLogger } from '../kernel/check.js';
import type { ResponseSpecOf } from '../api/response-schemas.js';
import { DriftBook } from '../drift/book.js';
import type { DriftReport } from '../drift/report.js';
import { driftStorePath } from '../drift/store.js';
import { withLock } from '../sessions/lock.js';
import type { MeasurementEvent } from './messages.js';

/**
 * How often the document is made again to see whether time alone changed it: a difference across
 * environments becoming lasting (`ACROSS_LASTING_MS`, an hour). Everything else that changes it
 * (an answer, an accept, a reload) has it made again at once, and sent if it changed. Made every
 * 5 s, it was most of the daemon's CPU at rest on Node 24 (bench/LOG.md, "Node 24: the worker,
 * Node's own modules, drift's timers"); a minute late on an hour is nothing.
 */
export const DRIFT_REPORT_MS = 60_000;

/**
 * How long after an answer that changed no difference the document is made again: such an answer
 * can still move the comparison across environments (a field one environment has sent often
 * enough). Made after every answer, the document of every environment was built once per ping,
 * a thousand times a minute at 1000 environments; this makes it at most once per period while
 * answers arrive, and never at rest.
 */
export const DRIFT_OBSERVED_MS = 5_000;

/** When the document is made again: at once for a change, within a period for an answer. */
function reportSchedule(send: () => void): {
  changed(): void;
  observed(): void;
  stop(): void;
} {
  let queued = false;
  let observedTimer: NodeJS.Timeout | null = null;
  // Several responses of one turn (a lifecycle's steps) make one document.
  const changed = (): void => {
    if (queued) return;
    queued = true;
    setImmediate(() => {
      queued = false;
      send();
    });
  };
  return {
    changed,
    observed() {
      if (observedTimer !== null) return;
      observedTimer = setTimeout(() => {
        observedTimer = null;
        changed();
      }, DRIFT_OBSERVED_MS);
      observedTimer.unref();
    },
    stop() {
      if (observedTimer !== null) clearTimeout(observedTimer);
    },
  };
}

export interface DriftWatch {
  /** Learns from or compares one response of `environment`. */
  observe(environment: string, response: ApiResponse): void;
  /** The configured environments, in order: the document covers these alone. */
  setEnvironments(environments: readonly string[]): void;
  /** Writes what was learned and stops. */
  close(): Promise<void>;
}

export interface DriftWatchOptions {
  stateFile: string;
  environments: readonly string[];
  emit: (event: MeasurementEvent) => void;
  log: CheckLogger;
  /** The spec's view of each operation's answers, from the checks of this build. */
  specOf: ResponseSpecOf;
  /** The operations whose answer is the provider list, from the checks of this build. */
  providerLists: ReadonlySet<string>;
}

/** Opens the book beside `stateFile` and reports its document from now on. */
export async function openDriftWatch(options: DriftWatchOptions): Promise<DriftWatch> {
  const path = driftStorePath(options.stateFile);
  let environments = [...options.environments];
  let sent: Omit<DriftReport, 'generated_at'> | null = null;
  const send = (always: boolean): void => {
    const full = book.report(environments);
    const { generated_at: _, ...report } = full;
    if (!always && isDeepStrictEqual(report, sent)) return;
    sent = report;
    options.emit({ type: 'contract_drift', report: full });
    // The file follows: `isa-monitor drift` prints the same document as /api/status.
    if (!always) void book.sync(true);
  };
  const schedule = reportSchedule(() => send(false));
  const changed = schedule.changed;
  let failing = false;
  const opened = await DriftBook.open({
    path,
    specOf: options.specOf,
    listsProviders: (operation) => options.providerLists.has(operation),
    onChange: changed,
    onAccept: (environment, operation, accepted) =>
      options.log.info(
        { environment, operation, acceptedAt: accepted.at, acceptedBy: accepted.by },
        'contract baseline accepted',
      ),
    withLock: (fn) => withLock(`${path}.lock`, fn),
    onWriteError: (err) => {
      if (!failing) options.log.warn({ err, file: path }, 'contract baselines not written');
      failing = true;
    },
  });
  const book = opened.book;
  if (opened.recovered !== null) {
    options.log.warn(
      { file: path, detail: opened.recovered },
      'contract baselines unreadable; set aside, learning starts again',
    );
  }
  send(true);
  const timer = setInterval(() => send(false), DRIFT_REPORT_MS);
  timer.unref();
  return {
    observe(environment, response) {
      book.observe(environment, response);
      schedule.observed();
    },
    setEnvironments(next) {
      environments = [...next];
      changed();
    },
    async close() {
      clearInterval(timer);
      schedule.stop();
      await book.close();
    },
  };
}
