/**
 * Every environment's drift, as the measurement engine keeps it (docs/drift.md): it observes each
 * API response, reports the open differences of an operation when they change, and keeps the
 * baselines on disk. Accepting happens in another process (`isa-monitor drift accept`) on the
 * file: the book notices the file changed under it, takes the accepted operations from it, and
 * writes only under the same lock, so an accept is never overwritten.
 */
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { SpecView } from './compare.js';
import { takeFacts } from './facts.js';
import { driftReport, type DriftReport } from './report.js';
import { readDriftState, writeDriftState, type DriftExtras, type DriftState } from './store.js';
import {
  accept,
  countBySeverity,
  newOperationDrift,
  observe,
  type OperationDrift,
} from './tracker.js';
import type { ObservedResponse } from './shape.js';

/** The key of error envelopes: every operation's non-2xx JSON answers share one shape. */
export const ERROR_ENVELOPE = 'error';

/**
 * How often the book looks for an accept made on the file, and writes what it learned, besides
 * the file's own change events (`watchFile` below), which take an accept at once. Looking every
 * 5 s was half of the daemon's CPU at rest on Node 24 (bench/LOG.md, "Node 24: the worker,
 * Node's own modules, drift's timers").
 */
export const DRIFT_SYNC_MS = 60_000;
/**
 * The longest a learned response waits to be written, when nothing else changed (a change to the
 * drift document is written at once). The file is written whole; once a minute that was 0.7 ms
 * of CPU per ping at ten environments (bench/LOG.md, "Node 24: the worker, Node's own modules,
 * drift's timers").
 */
export const DRIFT_WRITE_MS = 10 * 60_000;

/** One response, as the book reads it from the API client. */
export interface DriftResponse {
  operation: string;
  statusCode: number | null;
  headers: Readonly<Record<string, string>>;
  body: unknown;
  bodyBytes?: number;
}

export type DriftCounts = ReturnType<typeof countBySeverity>;

export interface DriftBookOptions {
  path: string;
  /** The spec's view of a key's responses: an operation, or `error`. */
  specOf: (key: string) => SpecView | undefined;
  /**
   * Whether an operation's answer is the provider list, compared across environments (the
   * checks' `listsProviders`); none is without it.
   */
  listsProviders?: (operation: string) => boolean;
  /** Called when the open differences of an operation change. */
  onChange: (environment: string, operation: string, counts: DriftCounts) => void;
  /** Runs a write of the file under the inter-process lock. */
  withLock: <T>(fn: () => Promise<T>) => Promise<T>;
  onWriteError: (err: unknown) => void;
  /** Called for each operation whose accept, made on the file, the book took. */
  onAccept?: (
    environment: string,
    operation: string,
    accepted: NonNullable<OperationDrift['accepted']>,
  ) => void;
  now?: () => Date;
}

export class DriftBook {
  #state: DriftState;
  #extras: DriftExtras;
  #fileMtimeMs: number | null = null;
  #dirty = false;
  #lastWrite = 0;
  #timer: NodeJS.Timeout | null = null;
  #watcher: FSWatcher | null = null;
  #syncing: Promise<void> = Promise.resolve();

  private constructor(
    state: DriftState,
    extras: DriftExtras,
    private readonly options: DriftBookOptions,
  ) {
    this.#state = state;
    this.#extras = extras;
  }

  /** Reads the file (setting an unreadable one aside) and starts syncing with it. */
  static async open(
    options: DriftBookOptions,
  ): Promise<{ book: DriftBook; recovered: string | null }> {
    const read = await readDriftState(options.path);
    const book = new DriftBook(read.state, read.extras, options);
    book.#fileMtimeMs = await mtimeOf(options.path);
    book.#timer = setInterval(() => void book.sync(), DRIFT_SYNC_MS);
    book.#timer.unref();
    book.#watcher = watchFile(options.path, () => void book.sync());
    return { book, recovered: read.recovered };
  }

  /** The open differences of every operation known, for the metrics at start-up. */
  counts(): { environment: string; operation: string; counts: DriftCounts }[] {
    return Object.entries(this.#state).flatMap(([environment, operations]) =>
      Object.entries(operations).map(([operation, drift]) => ({
        environment,
        operation,
        counts: countBySeverity(drift),
      })),
    );
  }

  /** Learns from or compares one response of `environment`. */
  observe(environment: string, response: DriftResponse, redact?: (text: string) => string): void {
    if (response.statusCode === null || response.body === undefined) return;
    const key = response.statusCode < 300 ? response.operation : ERROR_ENVELOPE;
    const known = this.#state[environment]?.[key] !== undefined;
    const drift = this.#operation(environment, key);
    const observed: ObservedResponse = {
      body: response.body,
      headers: response.headers,
      bytes: response.bodyBytes ?? 0,
    };
    const spec = this.options.specOf(key);
    const changed = observe(drift, {
      response: observed,
      now: this.#now(),
      ...(spec ? { spec } : {}),
      ...(redact ? { redact } : {}),
    });
    this.#dirty = true;
    const facts = (this.#extras.facts[environment] ??= {});
    const listsProviders = this.options.listsProviders?.(key) ?? false;
    const newFacts =
      response.statusCode < 300 && takeFacts(facts, response.body, this.#now(), listsProviders);
    // A new operation is reported too: its series and its baseline exist from its first answer.
    if (changed || newFacts || !known) {
      this.options.onChange(environment, key, countBySeverity(drift));
      void this.sync(true);
    }
  }

  /**
   * The drift document (`report.ts`) of `environments` (all known when absent): it also dates
   * the differences between environments, kept with the baselines.
   */
  report(environments?: readonly string[]): DriftReport {
    return driftReport({
      state: this.#state,
      extras: this.#extras,
      now: this.#now(),
      specOf: this.options.specOf,
      ...(environments ? { environments } : {}),
    });
  }

  #operation(environment: string, key: string): OperationDrift {
    const operations = (this.#state[environment] ??= {});
    return (operations[key] ??= newOperationDrift(this.#now()));
  }

  /**
   * Takes accepts made on the file since it was last read, then writes what was learned when
   * `force`d or due. Never throws: a failed write is reported and tried again at the next sync.
   */
  sync(force = false): Promise<void> {
    // One sync at a time in this process: each starts after the one before has written.
    const next = this.#syncing.then(() => this.#syncNow(force));
    this.#syncing = next.catch(() => undefined);
    return next;
  }

  async #syncNow(force: boolean): Promise<void> {
    // Nothing to take and nothing to write: no lock. Taking it every 5 s (a lock file made and
    // removed) was most of what the daemon did at rest (bench/LOG.md, "Node 24: the worker, Node's
    // own modules, drift's timers"); the file is replaced by a rename, so its time stamp is safe
    // to read outside.
    try {
      if (!this.#writeDue(force) && !(await this.#changedOnDisk())) return;
      await this.options.withLock(async () => {
        await this.#takeAccepts();
        if (!this.#writeDue(force)) return;
        // Cleared as the state is taken: an answer observed while the file is written marks the
        // book again, instead of being lost to a flag cleared after the write.
        this.#dirty = false;
        try {
          await writeDriftState(this.options.path, this.#state, this.#extras);
        } catch (err) {
          this.#dirty = true;
          throw err;
        }
        this.#lastWrite = this.#now().getTime();
        this.#fileMtimeMs = await mtimeOf(this.options.path);
      });
    } catch (err) {
      this.options.onWriteError(err);
    }
  }

  #writeDue(force: boolean): boolean {
    return this.#dirty && (force || this.#now().getTime() - this.#lastWrite >= DRIFT_WRITE_MS);
  }

  async #changedOnDisk(): Promise<boolean> {
    const mtime = await mtimeOf(this.options.path);
    return mtime !== null && mtime !== this.#fileMtimeMs;
  }

  async #takeAccepts(): Promise<void> {
    const mtime = await mtimeOf(this.options.path);
    if (mtime === null || mtime === this.#fileMtimeMs) return;
    this.#fileMtimeMs = mtime;
    const { state } = await readDriftState(this.options.path);
    for (const [environment, operations] of Object.entries(state)) {
      for (const [key, onDisk] of Object.entries(operations)) {
        const held = this.#state[environment]?.[key];
        if (!acceptedLater(onDisk, held)) continue;
        (this.#state[environment] ??= {})[key] = onDisk;
        if (onDisk.accepted) this.options.onAccept?.(environment, key, onDisk.accepted);
        this.options.onChange(environment, key, countBySeverity(onDisk));
        this.#dirty = true;
      }
    }
  }

  /** Writes what is left and stops syncing. */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#watcher?.close();
    this.#watcher = null;
    await this.sync(true);
  }

  #now(): Date {
    return this.options.now?.() ?? new Date();
  }
}

function acceptedLater(onDisk: OperationDrift, held: OperationDrift | undefined): boolean {
  if (onDisk.accepted === undefined) return false;
  if (held?.accepted === undefined) return true;
  return Date.parse(onDisk.accepted.at) > Date.parse(held.accepted.at);
}

async function mtimeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return null;
  }
}

/** What `acceptBaselines` accepted: the operations, by name. */
export interface AcceptResult {
  accepted: string[];
  /** Open differences cleared, over all the accepted operations. */
  cleared: number;
}

/**
 * Accepts what an environment's operations (or one of them) now return as their baselines, on
 * the file, under the lock: the deliberate act of `isa-monitor drift accept`. A running daemon
 * takes it at its next sync (`DRIFT_SYNC_MS`).
 */
export async function acceptBaselines(options: {
  path: string;
  environment: string;
  operation?: string;
  by: string;
  now: Date;
  withLock: <T>(fn: () => Promise<T>) => Promise<T>;
}): Promise<AcceptResult> {
  return options.withLock(async () => {
    const { state, extras } = await readDriftState(options.path);
    const operations = state[options.environment] ?? {};
    const result: AcceptResult = { accepted: [], cleared: 0 };
    for (const [key, drift] of Object.entries(operations)) {
      if (options.operation !== undefined && key !== options.operation) continue;
      result.cleared += Object.keys(drift.differences).length;
      accept(drift, options.by, options.now);
      result.accepted.push(key);
    }
    if (result.accepted.length > 0) await writeDriftState(options.path, state, extras);
    return result;
  });
}

/**
 * Calls `onChange` when `path` is replaced or written (an accept renames a new file into place),
 * through the folder's change events: a watch on the file itself would follow the old file after
 * a rename. Null where the system gives no events (then the periodic sync alone finds accepts).
 */
function watchFile(path: string, onChange: () => void): FSWatcher | null {
  const name = basename(path);
  try {
    const watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
      if (file === null || file === name) onChange();
    });
    watcher.on('error', () => watcher.close());
    return watcher;
  } catch {
    return null;
  }
}
