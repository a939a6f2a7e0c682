/**
 * The session ledger: every synthetic session token the monitor learns is written here before the
 * check goes on with it, and removed once the API confirmed the close. A crash or SIGKILL therefore
 * leaves the token on disk, and a later process closes it.
 *
 * Before each create, an *intent* is written too (time, correlation id, campaign, address): if the
 * process dies before the answer arrives, the session may exist on the API with a token nobody
 * received. Nothing can close it, but the intent lets the next process report it with what the API
 * operator needs to find it.
 *
 * Several processes share one file (`check` next to the daemon). Each entry names its owner
 * process; every write happens under an inter-process lock (`lock.ts`) and merges: it re-reads the
 * file, keeps the other processes' entries as they are and replaces its own. A process closes only
 * its own sessions and adopts those whose owner is gone (`adoptOrphans`).
 *
 * Writes are atomic (a temporary file, then rename); a failed write removes its temporary file.
 * Write failures (full or read-only disk) flip `writable`, reported once per change through
 * `onWritableChange`; while unwritable, the ledger retries in the background so it notices when
 * the disk is back.
 */
import { mkdir, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { readBoundedTextAsync } from '../config/files.js';
import { withLock } from './lock.js';
import { newOwner, ownerGone, processAlive, type SessionOwner } from './owner.js';
import {
  fingerprintKey,
  newSalt,
  recordedSource,
  type KeyReference,
  type SessionTarget,
} from './key-reference.js';

/**
 * Where a session lives and how to find its key again (version 3): what a later process needs to
 * close it even when its environment is no longer configured. Absent in version-2 entries.
 */
interface Whereabouts {
  baseUrl?: string;
  key?: KeyReference;
}

export interface LedgerEntry extends Whereabouts {
  environment: string;
  token: string;
  /** Unix time in ms when the session was created (or its token learned). */
  createdAt: number;
  owner?: SessionOwner | null;
}

/** A create that was about to be sent: what identifies the session if no token ever arrives. */
export interface CreateIntent extends Whereabouts {
  id: string;
  environment: string;
  /** Unix time in ms when the create was sent. */
  createdAt: number;
  correlationId: string;
  campaignId: string;
  address: Record<string, string>;
  owner?: SessionOwner | null;
}

interface LedgerFile {
  version: 2 | 3;
  /** The salt of every key fingerprint in the file (`key-reference.ts`); absent before version 3. */
  salt?: string;
  sessions: LedgerEntry[];
  intents: CreateIntent[];
}

/**
 * Largest ledger read: some forty thousand entries, far more than weeks of failing closes list.
 * Anything else at the path (a FIFO, a device, a larger file) is refused before it is read.
 */
export const MAX_LEDGER_BYTES = 16 * 1024 * 1024;

/** How often an unwritable ledger tries again. */
export const WRITE_RETRY_MS = 5_000;

/**
 * Longest time between two full looks for orphans (`adoptOrphans`). In between, a look that finds
 * the file as this process last left it, and every other owner it named alive, stops there.
 */
export const FULL_LOOK_MS = 5 * 60_000;

export interface LedgerOptions {
  /** Background retry interval while unwritable. */
  retryMs?: number;
  /** Longest time between two full looks for orphans; default `FULL_LOOK_MS`. */
  fullLookMs?: number;
  /** Monotonic clock in ms (tests). */
  now?: () => number;
}

/**
 * The file as this process last read or wrote it, under the lock: its identity (a write replaces
 * it, so inode, size and times change) and the other owners it named.
 */
interface LastLook {
  /** Null when the file must be read at every look (it has entries without an owner). */
  file: string | null;
  others: SessionOwner[];
  /** When the last full look for orphans was. */
  fullAt: number;
}

export class SessionLedger {
  /** This process as an owner of entries. */
  readonly owner: SessionOwner = newOwner();
  private entries: LedgerEntry[] = [];
  private intents: CreateIntent[] = [];
  private writes: Promise<void> = Promise.resolve();
  private writeCount = 0;
  private isWritable = true;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(environment: string, open: number) => void>();
  private readonly writableListeners = new Set<(writable: boolean, err?: unknown) => void>();
  private readonly retryMs: number;
  private readonly fullLookMs: number;
  private readonly now: () => number;
  private lastLook: LastLook | null = null;
  /** The configured environments' addresses and keys, stamped on their new entries. */
  private readonly targets = new Map<string, SessionTarget>();

  private constructor(
    readonly path: string,
    opts: LedgerOptions,
    /**
     * The environments the file named (sessions or create intents, of any owner) when it was
     * opened: they may have leftovers to close or report even if no check creates sessions there
     * any more.
     */
    readonly namedAtOpen: ReadonlySet<string> = new Set(),
    /** The file's fingerprint salt; a new one when the file has none yet. */
    private salt: string = newSalt(),
  ) {
    this.retryMs = opts.retryMs ?? WRITE_RETRY_MS;
    this.fullLookMs = opts.fullLookMs ?? FULL_LOOK_MS;
    this.now = opts.now ?? (() => performance.now());
  }

  /**
   * Opens the ledger at `path`. Nothing is read into this process's own list: entries on disk
   * belong to their owners until `adoptOrphans` takes over those whose owner is gone. An
   * unreadable or corrupt file is an error, never ignored.
   */
  static async open(path: string, opts: LedgerOptions = {}): Promise<SessionLedger> {
    const file = await readLedgerFile(path);
    const named = [...file.sessions, ...file.intents].map((item) => item.environment);
    return new SessionLedger(path, opts, new Set(named), file.salt);
  }

  /**
   * Where `environment`'s sessions are created and with which key: recorded with each of its new
   * entries and intents (the key only as its source and fingerprint, never the key itself).
   */
  describe(environment: string, target: SessionTarget): void {
    this.targets.set(environment, target);
  }

  /** Whether `key` is the key whose fingerprint (under this file's salt) is `fingerprint`. */
  keyMatches(key: string, fingerprint: string): boolean {
    return fingerprintKey(this.salt, key) === fingerprint;
  }

  /** The recorded address and key reference of a new entry of `environment`. */
  private whereabouts(environment: string): Whereabouts {
    const target = this.targets.get(environment);
    if (target === undefined) return {};
    const { baseUrl, keySource, apiKey } = target;
    if (keySource === null || apiKey === null) return { baseUrl };
    const fingerprint = fingerprintKey(this.salt, apiKey);
    return { baseUrl, key: { source: recordedSource(keySource), fingerprint } };
  }

  /** This process's open entries, optionally for one environment. */
  list(environment?: string): LedgerEntry[] {
    return this.entries.filter((e) => environment === undefined || e.environment === environment);
  }

  count(environment: string): number {
    return this.list(environment).length;
  }

  has(environment: string, token: string): boolean {
    return this.entries.some((e) => e.environment === environment && e.token === token);
  }

  /** True unless the last write failed. */
  get writable(): boolean {
    return this.isWritable;
  }

  /** Records a token; resolves once it is on disk. */
  async add(environment: string, token: string, createdAt = Date.now()): Promise<void> {
    if (this.listTokens(environment, [token], createdAt)) await this.persist(environment);
  }

  /** Forgets a token; resolves once the file no longer lists it. */
  async remove(environment: string, token: string): Promise<void> {
    if (!this.has(environment, token)) return;
    this.entries = this.entries.filter(
      (e) => !(e.environment === environment && e.token === token),
    );
    await this.persist(environment);
  }

  /** Records an intent to create a session; resolves once it is on disk. */
  async addIntent(intent: Omit<CreateIntent, 'owner'>): Promise<void> {
    const where = this.whereabouts(intent.environment);
    this.intents = [...this.intents, { ...where, ...intent, owner: this.owner }];
    await this.persist(intent.environment);
  }

  /** Forgets an intent (its create answered, with or without a token). */
  async removeIntent(id: string): Promise<void> {
    const intent = this.intents.find((i) => i.id === id);
    if (!intent) return;
    this.intents = this.intents.filter((i) => i.id !== id);
    await this.persist(intent.environment);
  }

  /**
   * Settles a create in one write: records the tokens its answer carried and forgets its intent.
   * One write, not one per token and one for the intent: a lifecycle run writes the ledger three
   * times instead of four, and a write is some ten file operations (bench/LOG.md, "CPU per
   * run"). The file never lists the intent without the tokens or the reverse halfway.
   */
  async settleIntent(
    id: string,
    environment: string,
    tokens: readonly string[],
    createdAt = Date.now(),
  ): Promise<void> {
    const listed = this.listTokens(environment, tokens, createdAt);
    const pending = this.intents.some((i) => i.id === id);
    if (!listed && !pending) return;
    this.intents = this.intents.filter((i) => i.id !== id);
    await this.persist(environment);
  }

  /** Lists the tokens not yet listed, in memory only; whether there were any. */
  private listTokens(environment: string, tokens: readonly string[], createdAt: number): boolean {
    const fresh = [...new Set(tokens)].filter((token) => !this.has(environment, token));
    if (fresh.length === 0) return false;
    const where = this.whereabouts(environment);
    this.entries = [
      ...this.entries,
      ...fresh.map((token) => ({ environment, ...where, token, createdAt, owner: this.owner })),
    ];
    return true;
  }

  /** This process's intents still waiting for an answer. */
  pendingIntents(): CreateIntent[] {
    return [...this.intents];
  }

  /**
   * Takes over the sessions of owners that are gone (to close them) and removes their intents,
   * returning those: sessions that may be open on the API with a token nobody holds. Also removes
   * temporary files that dead writers left behind.
   *
   * The daemon looks after every check run. Most looks find nothing new, and a full look (lock,
   * read, directory listing: some ten file operations) was most of a ping's CPU beside the
   * request itself. So unless `full` is set or `FULL_LOOK_MS` has passed, a look whose one `stat`
   * finds the file as this process last left it, with every other owner it named still alive,
   * returns at once: nothing can have been orphaned (an owner that dies leaves its entries
   * unchanged, which is why the owners are checked). A temporary file left by a writer that died
   * before its first entry reached the file waits for the next full look.
   */
  async adoptOrphans(
    opts: { full?: boolean } = {},
  ): Promise<{ sessions: LedgerEntry[]; intents: CreateIntent[] }> {
    if (!opts.full && (await this.unchangedSinceLastLook())) return { sessions: [], intents: [] };
    let adopted: LedgerEntry[] = [];
    let lost: CreateIntent[] = [];
    const write = this.writes.then(() =>
      withLock(this.lockPath, async () => {
        const file = await readLedgerFile(this.path);
        await this.remember(file, true);
        adopted = file.sessions.filter(
          (e) => ownerGone(e.owner, this.owner) && !this.has(e.environment, e.token),
        );
        lost = file.intents.filter((i) => ownerGone(i.owner, this.owner));
        if (adopted.length === 0 && lost.length === 0) return;
        this.entries = [
          ...this.entries,
          ...adopted.map((e) => ({ ...e, owner: this.owner, createdAt: e.createdAt ?? 0 })),
        ];
        await this.writeMerged(file, new Set(lost.map((i) => i.id)));
      }),
    );
    this.writes = write.catch(() => undefined);
    await this.track(write);
    await removeDeadTemporaryFiles(this.path);
    for (const environment of new Set(adopted.map((e) => e.environment))) this.notify(environment);
    return { sessions: adopted, intents: lost };
  }

  /** True when a look for orphans can stop: see `adoptOrphans`. */
  private async unchangedSinceLastLook(): Promise<boolean> {
    await this.writes;
    const last = this.lastLook;
    if (last === null || this.now() - last.fullAt >= this.fullLookMs) return false;
    if (last.others.some((owner) => ownerGone(owner, this.owner))) return false;
    return last.file !== null && (await fileIdentity(this.path)) === last.file;
  }

  /** Notes what the file holds now; called under the lock after reading or writing it. */
  private async remember(file: LedgerFile, fullLook = false): Promise<void> {
    const others = new Map<string, SessionOwner>();
    for (const item of [...file.sessions, ...file.intents]) {
      if (item.owner && item.owner.id !== this.owner.id) others.set(item.owner.id, item.owner);
    }
    // An entry without an owner (a version-1 file) is always an orphan: never skip a look then.
    const ownerless = [...file.sessions, ...file.intents].some((item) => !item.owner);
    const identity = ownerless ? null : await fileIdentity(this.path);
    this.lastLook = {
      file: identity,
      others: [...others.values()],
      fullAt: fullLook ? this.now() : (this.lastLook?.fullAt ?? -Infinity),
    };
  }

  /** Writes the current state; rejects when the state directory is not writable. */
  async checkWritable(): Promise<void> {
    const write = this.writes.then(() =>
      withLock(this.lockPath, async () => this.writeMerged(await readLedgerFile(this.path))),
    );
    this.writes = write.catch(() => undefined);
    await this.track(write);
  }

  /** Called with the environment's open count after every change. */
  onChange(listener: (environment: string, open: number) => void): void {
    this.listeners.add(listener);
  }

  /** Called when writes start failing or work again (once per change, not per write). */
  onWritableChange(listener: (writable: boolean, err?: unknown) => void): void {
    this.writableListeners.add(listener);
  }

  /** Stops the background retry. */
  close(): void {
    clearInterval(this.retryTimer);
    this.retryTimer = undefined;
  }

  private get lockPath(): string {
    return `${this.path}.lock`;
  }

  private persist(environment: string): Promise<void> {
    const write = this.writes.then(() =>
      withLock(this.lockPath, async () => this.writeMerged(await readLedgerFile(this.path))),
    );
    // Keep the chain alive after a failed write; the caller still sees the failure.
    this.writes = write.catch(() => undefined);
    return this.track(write).then(() => this.notify(environment));
  }

  private notify(environment: string): void {
    const open = this.count(environment);
    for (const listener of this.listeners) listener(environment, open);
  }

  /** Writes the other owners' entries from `onDisk` plus this process's own, atomically. */
  private async writeMerged(onDisk: LedgerFile, dropIntents = new Set<string>()): Promise<void> {
    const mine = (owner: SessionOwner | null | undefined): boolean => owner?.id === this.owner.id;
    this.adoptSalt(onDisk);
    const snapshot: LedgerFile = {
      version: 3,
      salt: this.salt,
      sessions: [
        ...onDisk.sessions.filter((e) => !mine(e.owner) && !this.has(e.environment, e.token)),
        ...this.entries,
      ],
      intents: [
        ...onDisk.intents.filter((i) => !mine(i.owner) && !dropIntents.has(i.id)),
        ...this.intents,
      ],
    };
    await mkdir(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${process.pid}.${this.writeCount++}.tmp`;
    try {
      await writeFile(tmp, `${JSON.stringify(snapshot, null, 2)}\n`, { mode: 0o600 });
      await rename(tmp, this.path);
      await this.remember(snapshot);
    } catch (err) {
      // A full disk leaves a partial temporary file; never let those pile up.
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Keeps the salt the file already has: two processes that opened a file without one each drew
   * their own, and the first write decides. This process's entries are fingerprinted again under
   * it (only those whose environment is described with the key they recorded).
   */
  private adoptSalt(onDisk: LedgerFile): void {
    if (onDisk.salt === undefined || onDisk.salt === this.salt) return;
    const previous = this.salt;
    this.salt = onDisk.salt;
    const again = <T extends Whereabouts & { environment: string }>(item: T): T => {
      const apiKey = this.targets.get(item.environment)?.apiKey;
      if (
        item.key === undefined ||
        !apiKey ||
        fingerprintKey(previous, apiKey) !== item.key.fingerprint
      )
        return item;
      return { ...item, key: { ...item.key, fingerprint: fingerprintKey(this.salt, apiKey) } };
    };
    this.entries = this.entries.map(again);
    this.intents = this.intents.map(again);
  }

  /** Follows a write's outcome to keep `writable` and the background retry up to date. */
  private async track(write: Promise<void>): Promise<void> {
    try {
      await write;
      this.setWritable(true);
    } catch (err) {
      this.setWritable(false, err);
      throw err;
    }
  }

  private setWritable(writable: boolean, err?: unknown): void {
    if (writable === this.isWritable) return;
    this.isWritable = writable;
    if (writable) this.close();
    else {
      this.retryTimer = setInterval(() => {
        this.checkWritable().catch(() => undefined);
      }, this.retryMs);
      this.retryTimer.unref();
    }
    for (const listener of this.writableListeners) listener(writable, err);
  }
}

/**
 * Removes the temporary files (`<path>.<pid>.<n>.tmp`) that a process killed during its write
 * left beside `path`: those of processes that no longer exist. The uptime record, written the
 * same way, shares it.
 */
export async function removeDeadTemporaryFiles(path: string): Promise<void> {
  const prefix = `${basename(path)}.`;
  let names: string[];
  try {
    names = await readdir(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^\.?(\d+)\.(?:\d+\.)?tmp$/.exec(name.slice(prefix.length));
    if (!name.startsWith(prefix) || !match) continue;
    const pid = Number(match[1]);
    if (pid !== process.pid && !processAlive(pid)) {
      await unlink(join(dirname(path), name)).catch(() => undefined);
    }
  }
}

/** What changes whenever the file is replaced or written; '' when there is none. */
async function fileIdentity(path: string): Promise<string> {
  try {
    const s = await stat(path, { bigint: true });
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return '';
  }
}

async function readLedgerFile(path: string): Promise<LedgerFile> {
  let text: string;
  try {
    text = await readBoundedTextAsync(path, MAX_LEDGER_BYTES);
  } catch (err) {
    // ENOTDIR: a parent is a file, so no ledger can exist there (writes will fail and say so).
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      return { version: 2, sessions: [], intents: [] };
    }
    throw new Error(`cannot read the session ledger ${path}`, { cause: err });
  }
  return parseLedger(path, text);
}

function parseLedger(path: string, text: string): LedgerFile {
  if (text.trim() === '') return { version: 2, sessions: [], intents: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`the session ledger ${path} is not valid JSON; fix or remove it`, {
      cause: err,
    });
  }
  const file = parsed as Partial<LedgerFile> | null;
  const sessions = file?.sessions;
  if (!Array.isArray(sessions)) {
    throw new Error(`the session ledger ${path} has no "sessions" list; fix or remove it`);
  }
  // Version 1 files have no intents and no owners: their sessions count as orphans.
  const intents = Array.isArray(file?.intents) ? file.intents : [];
  // Version 2 files have no salt: their entries carry no key reference either.
  const salt = typeof file?.salt === 'string' && file.salt !== '' ? { salt: file.salt } : {};
  return {
    version: 3,
    ...salt,
    sessions: sessions.filter(
      (e): e is LedgerEntry =>
        typeof e === 'object' &&
        e !== null &&
        typeof (e as LedgerEntry).environment === 'string' &&
        typeof (e as LedgerEntry).token === 'string',
    ),
    intents: intents.filter(
      (i): i is CreateIntent =>
        typeof i === 'object' &&
        i !== null &&
        typeof (i as CreateIntent).id === 'string' &&
        typeof (i as CreateIntent).environment === 'string',
    ),
  };
}
