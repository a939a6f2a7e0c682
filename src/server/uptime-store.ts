/**
 * The status page's long memory (docs/configuration.md, "The uptime record"): per environment,
 * check and UTC day, the scheduled runs, their failures and a latency histogram for the day's p50
 * and p95; per hour for the last day (the 24 h uptime); and the availability check's incidents
 * with their cause. 90 days, then it ages out.
 *
 * One JSON file beside the session ledger (`<state_file minus .json>.uptime.json`), read once at
 * start and rewritten whole at most once a minute and at shutdown: a temporary file, fsync, then
 * rename, as the ledger writes. A crash or SIGKILL leaves the previous file whole, so at most the
 * last minute is lost. Plain JSON because the record is small (`bench/uptime-store.ts` measures it)
 * and an operator can read it with `jq`; a database would be a dependency and a file format
 * for a few hundred kilobytes.
 *
 * Only the daemon writes it, from its main thread, which receives every result; `check`
 * processes never open it, so it needs no lock of its own (docs/configuration.md).
 */
import { open, rename, unlink, mkdir } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { readBoundedTextAsync, UnsuitableFileError } from '../config/files.js';
import type { AnyCheck, CheckResult } from '../kernel/check.js';
import { removeDeadTemporaryFiles } from '../sessions/ledger.js';

/** Days kept (today included); older days and incidents age out. */
export const RETENTION_DAYS = 90;
/** Hours kept per check for the 24 h uptime (the current one and the 24 before it). */
export const RETENTION_HOURS = 25;
/** Incidents kept per environment, the newest: bounds the file when the API flaps all quarter. */
export const MAX_INCIDENTS = 500;
/**
 * Largest record read at start: 70 times the 237 KiB a flapping quarter of two environments
 * takes (docs/configuration.md, "The uptime record"). A larger file is not a record this
 * monitor wrote; reading it whole once cost 694 MB.
 */
export const MAX_UPTIME_RECORD_BYTES = 16 * 1024 * 1024;
/** Longest time between two writes of a changed record; also the most a crash loses. */
export const FLUSH_INTERVAL_MS = 60_000;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Latency buckets: four per doubling from 1 ms (±9 % around each bucket's middle) to ~5 min. */
const BUCKETS_PER_DOUBLING = 4;
const BUCKETS = 74;

/** One day's (or hour's) runs of one check, in and outside maintenance windows. */
export interface Counts {
  /** Runs outside maintenance windows. */
  r: number;
  /** Of those, failed. */
  f: number;
  /** Runs inside a maintenance window. */
  mr: number;
  /** Of those, failed. */
  mf: number;
}

interface DayRecord extends Counts {
  /**
   * Durations of the passing runs: `[bucket, count, ...]` pairs in bucket order, the used buckets
   * only (a dozen on a typical day), in memory as in the file: dense, 90 days of every check
   * would cost a third of a megabyte per environment.
   */
  h: number[];
}

export interface Incident {
  check: string;
  /** The first failed run's reason. */
  cause: string;
  /** Unix ms of the first failed run. */
  start: number;
  /** Unix ms of the next successful run; null while it lasts. */
  end: number | null;
  /** Failed runs in it. */
  failed: number;
  /** True when it began inside a maintenance window. */
  maintenance: boolean;
}

interface CheckRecord {
  days: Map<string, DayRecord>;
  hours: Map<number, Counts>;
}

interface EnvironmentRecord {
  checks: Map<string, CheckRecord>;
  /** Closed incidents, oldest first, and the open one. */
  incidents: Incident[];
  open: Incident | null;
  /** The availability check's last scheduled run: when, and whether the API was up. */
  last: { t: number; state: 'up' | 'down' | 'unknown' } | null;
}

/** The file: compact JSON, version 1. Histograms are `[bucket, count, ...]` pairs. */
interface UptimeFile {
  version: 1;
  saved_at: string;
  environments: Record<
    string,
    {
      checks: Record<
        string,
        {
          days: Record<string, Counts & { h: number[] }>;
          hours: Record<string, Counts>;
        }
      >;
      incidents: Incident[];
      open: Incident | null;
      last: EnvironmentRecord['last'];
    }
  >;
}

export interface UptimeStoreOptions {
  /** The file (see `uptimeStorePath`). */
  path: string;
  /** The checks of this build: the one with `availability` is the environment's record. */
  checks: readonly AnyCheck[];
  /** Wall clock in ms; injectable for tests. */
  now?: () => number;
  /** Longest time between two writes of a changed record; 0: only `flush()` writes. */
  flushIntervalMs?: number;
  /** Whether the environment is inside a maintenance window now. */
  inMaintenance?: (environment: string) => boolean;
  /**
   * Writes started failing (full or read-only disk): called once, not at every failed write; the
   * record stays in memory and is tried again.
   */
  onWriteError?: (err: unknown) => void;
  /** A write succeeded after `onWriteError`: called once per recovery. */
  onWriteRecovered?: () => void;
}

/** `sessions.json` → `sessions.uptime.json`, in the same directory. */
export function uptimeStorePath(stateFile: string): string {
  const ext = extname(stateFile);
  const stem = ext === '.json' ? basename(stateFile, ext) : basename(stateFile);
  return join(dirname(stateFile), `${stem}.uptime.json`);
}

/** UTC date `YYYY-MM-DD` of a Unix ms time. */
export function utcDate(t: number): string {
  return new Date(t).toISOString().slice(0, 10);
}

function bucketOf(ms: number): number {
  if (!(ms >= 1)) return 0;
  return Math.min(BUCKETS - 1, 1 + Math.floor(Math.log2(ms) * BUCKETS_PER_DOUBLING));
}

/** The middle of a bucket in ms (geometric). */
function bucketMiddle(bucket: number): number {
  if (bucket === 0) return 0.5;
  return 2 ** ((bucket - 0.5) / BUCKETS_PER_DOUBLING);
}

/** Counts one more in `bucket` of a `[bucket, count, ...]` histogram, keeping bucket order. */
function addToHistogram(pairs: number[], bucket: number): void {
  let i = 0;
  while (i < pairs.length && (pairs[i] ?? 0) < bucket) i += 2;
  if (pairs[i] === bucket) pairs[i + 1] = (pairs[i + 1] ?? 0) + 1;
  else pairs.splice(i, 0, bucket, 1);
}

/** The q-quantile of a `[bucket, count, ...]` histogram, to the bucket's middle; null if empty. */
export function quantile(pairs: readonly number[], q: number): number | null {
  let total = 0;
  for (let i = 1; i < pairs.length; i += 2) total += pairs[i] ?? 0;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    seen += pairs[i + 1] ?? 0;
    if (seen >= rank) return Math.round(bucketMiddle(pairs[i] ?? 0) * 10) / 10;
  }
  return null;
}

const emptyCounts = (): Counts => ({ r: 0, f: 0, mr: 0, mf: 0 });

function count(n: unknown): number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

function countsOf(raw: unknown): Counts {
  const c = (raw ?? {}) as Partial<Counts>;
  return { r: count(c.r), f: count(c.f), mr: count(c.mr), mf: count(c.mf) };
}

/** Runs and failures over a span; availability null when it had no run outside maintenance. */
export interface Availability {
  runs: number;
  failed: number;
  maintenance_runs: number;
  availability: number | null;
}

function availabilityOf(c: Counts): Availability {
  return {
    runs: c.r,
    failed: c.f,
    maintenance_runs: c.mr,
    availability: c.r === 0 ? null : 1 - c.f / c.r,
  };
}

function add(into: Counts, from: Counts): void {
  into.r += from.r;
  into.f += from.f;
  into.mr += from.mr;
  into.mf += from.mf;
}

export interface DayFigures extends Availability {
  date: string;
  /** Latency of the day's passing runs, ms, to within 9 %. */
  p50_ms: number | null;
  p95_ms: number | null;
}

/** The bounded, persistent record of scheduled runs behind `/api/uptime` and the badges. */
export class UptimeStore {
  private readonly environments = new Map<string, EnvironmentRecord>();
  private readonly now: () => number;
  private readonly inMaintenance: (environment: string) => boolean;
  private readonly onWriteError: (err: unknown) => void;
  private readonly onWriteRecovered: () => void;
  private readonly availabilityCheck: AnyCheck | undefined;
  private dirty = false;
  private writes: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private writeCount = 0;
  /** Why the file found at start was set aside (unreadable or not a record); null when it was fine. */
  recovered: string | null = null;
  /** The file found at start could not be moved aside: never written over. */
  private keptAway = false;
  /** Whether the last write failed: failures and the recovery are reported once each. */
  private failing = false;

  private constructor(
    readonly path: string,
    opts: UptimeStoreOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.inMaintenance = opts.inMaintenance ?? (() => false);
    this.onWriteError = opts.onWriteError ?? (() => {});
    this.onWriteRecovered = opts.onWriteRecovered ?? (() => {});
    this.availabilityCheck = opts.checks.find((check) => check.availability !== undefined);
    const every = opts.flushIntervalMs ?? FLUSH_INTERVAL_MS;
    if (every > 0) {
      this.timer = setInterval(() => {
        if (this.dirty) this.flush().catch(() => undefined);
      }, every);
      this.timer.unref();
    }
  }

  /**
   * Reads the record at `opts.path` (none yet is an empty record). A file that is not valid JSON
   * or not a record is renamed to `<path>.corrupt`, one larger than `MAX_UPTIME_RECORD_BYTES` to
   * `<path>.too-large`, and anything but a regular file (a FIFO, a device, a directory) to
   * `<path>.not-a-file`; the record then starts empty: losing the history must not stop the
   * monitor, and the file is kept for its owner (`recovered` says why). The read never blocks:
   * the file is opened non-blocking and refused before any read.
   */
  static async open(opts: UptimeStoreOptions): Promise<UptimeStore> {
    const store = new UptimeStore(opts.path, opts);
    // Temporary files of a writer killed during its write (SIGKILL).
    await removeDeadTemporaryFiles(opts.path);
    const text = await store.readAtStart();
    if (text !== null) {
      try {
        store.load(JSON.parse(text) as unknown);
      } catch (err) {
        store.environments.clear();
        await store.setAside('corrupt', `is not an uptime record (${(err as Error).message})`);
      }
    }
    store.prune();
    return store;
  }

  /** The file's text; null when there is none, or it was set aside or could not be read. */
  private async readAtStart(): Promise<string | null> {
    try {
      return await readBoundedTextAsync(this.path, MAX_UPTIME_RECORD_BYTES);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      if (err instanceof UnsuitableFileError && err.code === 'EFBIG') {
        await this.setAside('too-large', `is larger than ${MAX_UPTIME_RECORD_BYTES} bytes`);
      } else if (err instanceof UnsuitableFileError) {
        await this.setAside('not-a-file', 'is not a regular file (a FIFO, a device, a directory)');
      } else this.recovered = `cannot read ${this.path}: ${(err as Error).message}`;
      return null;
    }
  }

  /**
   * Renames the file found at start to `<path>.<suffix>`, never deleting it. When it cannot be
   * moved, the record is kept in memory only: a write would replace what is there.
   */
  private async setAside(suffix: string, why: string): Promise<void> {
    const aside = `${this.path}.${suffix}`;
    try {
      await rename(this.path, aside);
      this.recovered = `${this.path} ${why}; kept as ${aside}`;
    } catch {
      this.keptAway = true;
      this.recovered = `${this.path} ${why}, and could not be moved to ${aside}; the record is kept in memory only`;
    }
  }

  /** A record that is never written (tests, and a server without a state directory). */
  static memory(opts: Omit<UptimeStoreOptions, 'path' | 'flushIntervalMs'>): UptimeStore {
    return new UptimeStore('', { ...opts, path: '', flushIntervalMs: 0 });
  }

  /** The name of the check whose runs are the availability record, if this build has one. */
  get availabilityCheckName(): string | null {
    return this.availabilityCheck?.name ?? null;
  }

  /** Records one scheduled run (follow-ups are not the schedule and must not be passed). */
  record(result: CheckResult): void {
    const env = this.environment(result.environment);
    let check = env.checks.get(result.check);
    if (check === undefined) {
      check = { days: new Map(), hours: new Map() };
      env.checks.set(result.check, check);
    }
    const t = result.startedAt;
    const inWindow = this.inMaintenance(result.environment);
    const isAvailability = result.check === this.availabilityCheck?.name;
    const failures = this.availabilityCheck?.availability?.failures ?? [];
    const failed = isAvailability
      ? result.outcome === 'fail' && failures.includes(result.reason ?? '')
      : result.outcome === 'fail';
    const date = utcDate(t);
    let day = check.days.get(date);
    if (day === undefined) {
      day = { ...emptyCounts(), h: [] };
      check.days.set(date, day);
    }
    const hourKey = Math.floor(t / HOUR_MS);
    let hour = check.hours.get(hourKey);
    if (hour === undefined) {
      hour = emptyCounts();
      check.hours.set(hourKey, hour);
    }
    for (const c of [day, hour]) {
      if (inWindow) {
        c.mr += 1;
        if (failed) c.mf += 1;
      } else {
        c.r += 1;
        if (failed) c.f += 1;
      }
    }
    if (result.outcome === 'pass') {
      addToHistogram(day.h, bucketOf(result.durationMs));
    }
    if (isAvailability) this.trackIncident(env, result, failed, inWindow);
    this.dirty = true;
    // A day's first run is the moment older days age out.
    if (day.r + day.mr === 1) this.prune();
  }

  /**
   * An incident is a maximal run of consecutive failed scheduled runs of the availability check:
   * it starts at the first failed run and ends at the next successful one. A run that failed for
   * another reason (401, 429) neither starts nor ends one: it says nothing about the API.
   */
  private trackIncident(
    env: EnvironmentRecord,
    result: CheckResult,
    failed: boolean,
    inWindow: boolean,
  ): void {
    const state = failed ? 'down' : result.outcome === 'pass' ? 'up' : 'unknown';
    env.last = { t: result.startedAt, state };
    if (failed) {
      if (env.open === null) {
        env.open = {
          check: result.check,
          cause: result.reason ?? 'fail',
          start: result.startedAt,
          end: null,
          failed: 1,
          maintenance: inWindow,
        };
      } else env.open.failed += 1;
    } else if (result.outcome === 'pass' && env.open !== null) {
      env.incidents.push({ ...env.open, end: result.startedAt });
      env.open = null;
      if (env.incidents.length > MAX_INCIDENTS)
        env.incidents.splice(0, env.incidents.length - MAX_INCIDENTS);
    }
  }

  private environment(name: string): EnvironmentRecord {
    let env = this.environments.get(name);
    if (env === undefined) {
      env = { checks: new Map(), incidents: [], open: null, last: null };
      this.environments.set(name, env);
    }
    return env;
  }

  /** Environments with any record (configured or not: a removed one stays until it ages out). */
  environmentNames(): string[] {
    return [...this.environments.keys()];
  }

  /** The availability check's last run in `environment`, or null. */
  last(environment: string): EnvironmentRecord['last'] {
    return this.environments.get(environment)?.last ?? null;
  }

  /** The last `days` UTC days of a check, oldest first, today last; days without runs included. */
  days(environment: string, check: string, days: number): DayFigures[] {
    const record = this.environments.get(environment)?.checks.get(check);
    const today = Math.floor(this.now() / DAY_MS) * DAY_MS;
    const out: DayFigures[] = [];
    for (let i = days - 1; i >= 0; i--) {
      const date = utcDate(today - i * DAY_MS);
      const day = record?.days.get(date);
      out.push({
        date,
        ...availabilityOf(day ?? emptyCounts()),
        p50_ms: day ? quantile(day.h, 0.5) : null,
        p95_ms: day ? quantile(day.h, 0.95) : null,
      });
    }
    return out;
  }

  /**
   * Availability over a window: `24h` is the current hour and the 23 before it; `7d`, `30d` and
   * `90d` are today (UTC) and the days before it.
   */
  window(environment: string, check: string, window: UptimeWindow): Availability {
    const record = this.environments.get(environment)?.checks.get(check);
    const total = emptyCounts();
    if (record !== undefined) {
      if (window === '24h') {
        const first = Math.floor(this.now() / HOUR_MS) - 23;
        for (const [hour, c] of record.hours) if (hour >= first) add(total, c);
      } else {
        const n = WINDOW_DAYS[window];
        const first = utcDate(Math.floor(this.now() / DAY_MS) * DAY_MS - (n - 1) * DAY_MS);
        for (const [date, c] of record.days) if (date >= first) add(total, c);
      }
    }
    return availabilityOf(total);
  }

  /** Incidents that started in the last `days` days or are still open, the latest first. */
  incidents(environment: string, days: number): Incident[] {
    const env = this.environments.get(environment);
    if (env === undefined) return [];
    const since = Math.floor(this.now() / DAY_MS) * DAY_MS - (days - 1) * DAY_MS;
    return [...env.incidents, ...(env.open ? [env.open] : [])]
      .filter((incident) => incident.end === null || incident.start >= since)
      .sort((a, b) => b.start - a.start);
  }

  /** Drops days, hours and incidents older than the retention, and environments left empty. */
  private prune(): void {
    const now = this.now();
    const firstDay = utcDate(Math.floor(now / DAY_MS) * DAY_MS - (RETENTION_DAYS - 1) * DAY_MS);
    const firstHour = Math.floor(now / HOUR_MS) - (RETENTION_HOURS - 1);
    const firstMs = Date.parse(`${firstDay}T00:00:00Z`);
    for (const [name, env] of this.environments) {
      for (const [check, record] of env.checks) {
        for (const date of record.days.keys()) if (date < firstDay) record.days.delete(date);
        for (const hour of record.hours.keys()) if (hour < firstHour) record.hours.delete(hour);
        if (record.days.size === 0 && record.hours.size === 0) env.checks.delete(check);
      }
      const before = env.incidents.length;
      env.incidents = env.incidents.filter((i) => (i.end ?? now) >= firstMs);
      if (env.incidents.length !== before) this.dirty = true;
      if (env.checks.size === 0 && env.incidents.length === 0 && env.open === null) {
        this.environments.delete(name);
      }
    }
  }

  /** Writes the record now if it changed (atomically); resolves when it is on disk. */
  flush(): Promise<void> {
    const write = this.writes.then(async () => {
      if (!this.dirty || this.path === '' || this.keptAway) return;
      this.prune();
      this.dirty = false;
      try {
        await this.write(`${JSON.stringify(this.toFile())}\n`);
      } catch (err) {
        this.dirty = true;
        // One line when writes start failing, not one a minute (docs/configuration.md).
        if (!this.failing) this.onWriteError(err);
        this.failing = true;
        throw err;
      }
      if (this.failing) this.onWriteRecovered();
      this.failing = false;
    });
    this.writes = write.catch(() => undefined);
    return write;
  }

  /** Stops the timer and writes what changed (at shutdown). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async write(text: string): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${process.pid}.${this.writeCount++}.tmp`;
    try {
      const handle = await open(tmp, 'w', 0o600);
      try {
        await handle.writeFile(text);
        // On disk before the rename: a power cut must not leave a renamed but empty file.
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, this.path);
    } catch (err) {
      // A full disk leaves a partial temporary file; never let those pile up.
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }

  private toFile(): UptimeFile {
    const environments: UptimeFile['environments'] = {};
    for (const [name, env] of this.environments) {
      const checks: UptimeFile['environments'][string]['checks'] = {};
      for (const [check, record] of env.checks) {
        const days: Record<string, Counts & { h: number[] }> = {};
        for (const [date, day] of record.days) {
          days[date] = { r: day.r, f: day.f, mr: day.mr, mf: day.mf, h: [...day.h] };
        }
        const hours: Record<string, Counts> = {};
        for (const [hour, c] of record.hours) hours[String(hour)] = { ...c };
        checks[check] = { days, hours };
      }
      environments[name] = { checks, incidents: env.incidents, open: env.open, last: env.last };
    }
    return { version: 1, saved_at: new Date(this.now()).toISOString(), environments };
  }

  private load(raw: unknown): void {
    const file = raw as Partial<UptimeFile> | null;
    if (typeof file !== 'object' || file === null || file.version !== 1) {
      throw new Error('no version 1 record');
    }
    if (typeof file.environments !== 'object' || file.environments === null) {
      throw new Error('no "environments"');
    }
    for (const [name, rawEnv] of Object.entries(file.environments)) {
      const env = this.environment(name);
      for (const [check, rawCheck] of Object.entries(rawEnv.checks ?? {})) {
        const record: CheckRecord = { days: new Map(), hours: new Map() };
        for (const [date, rawDay] of Object.entries(rawCheck.days ?? {})) {
          if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) continue;
          // Rebuilt bucket by bucket: a hand-edited file cannot break the order or the bounds.
          const dense = new Array<number>(BUCKETS).fill(0);
          const pairs = Array.isArray(rawDay.h) ? rawDay.h : [];
          for (let i = 0; i + 1 < pairs.length; i += 2) {
            const b = pairs[i];
            if (typeof b === 'number' && Number.isInteger(b) && b >= 0 && b < BUCKETS) {
              dense[b] = count(pairs[i + 1]);
            }
          }
          const h: number[] = [];
          dense.forEach((n, b) => {
            if (n > 0) h.push(b, n);
          });
          record.days.set(date, { ...countsOf(rawDay), h });
        }
        for (const [hour, rawHour] of Object.entries(rawCheck.hours ?? {})) {
          if (/^\d+$/.test(hour)) record.hours.set(Number(hour), countsOf(rawHour));
        }
        env.checks.set(check, record);
      }
      env.incidents = (Array.isArray(rawEnv.incidents) ? rawEnv.incidents : [])
        .map(incidentOf)
        .filter((i): i is Incident => i !== null && i.end !== null);
      env.open = incidentOf(rawEnv.open);
      if (env.open !== null) env.open.end = null;
      const last = rawEnv.last;
      env.last =
        last && typeof last.t === 'number' && ['up', 'down', 'unknown'].includes(last.state)
          ? { t: last.t, state: last.state }
          : null;
    }
  }
}

function incidentOf(raw: unknown): Incident | null {
  const i = raw as Partial<Incident> | null;
  if (typeof i !== 'object' || i === null) return null;
  if (typeof i.start !== 'number' || typeof i.check !== 'string') return null;
  return {
    check: i.check,
    cause: typeof i.cause === 'string' ? i.cause : 'fail',
    start: i.start,
    end: typeof i.end === 'number' ? i.end : null,
    failed: count(i.failed),
    maintenance: i.maintenance === true,
  };
}

export const UPTIME_WINDOWS = ['24h', '7d', '30d', '90d'] as const;
export type UptimeWindow = (typeof UPTIME_WINDOWS)[number];
const WINDOW_DAYS: Record<Exclude<UptimeWindow, '24h'>, number> = { '7d': 7, '30d': 30, '90d': 90 };
