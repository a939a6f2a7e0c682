/**
 * The session ledger: every synthetic session token the monitor creates is written here before the
 * check goes on with it, and removed once the API confirmed the close. A crash or SIGKILL therefore
 * leaves the token on disk, and the next start-up closes it. Writes are atomic (temporary file,
 * then rename) and serialised, so a crash mid-write never corrupts the file.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface LedgerEntry {
  environment: string;
  token: string;
  /** Unix time in ms when the session was created. */
  createdAt: number;
}

interface LedgerFile {
  version: 1;
  sessions: LedgerEntry[];
}

export class SessionLedger {
  private entries: LedgerEntry[];
  private writes: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<(environment: string, open: number) => void>();

  private constructor(
    readonly path: string,
    entries: LedgerEntry[],
  ) {
    this.entries = entries;
  }

  /** Opens (or creates) the ledger at `path`. An unreadable file is an error, never ignored. */
  static async open(path: string): Promise<SessionLedger> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new SessionLedger(path, []);
      throw new Error(`cannot read the session ledger ${path}`, { cause: err });
    }
    return new SessionLedger(path, parseLedger(path, text));
  }

  /** Entries still open, optionally for one environment. */
  list(environment?: string): LedgerEntry[] {
    return this.entries.filter((e) => environment === undefined || e.environment === environment);
  }

  count(environment: string): number {
    return this.list(environment).length;
  }

  has(environment: string, token: string): boolean {
    return this.entries.some((e) => e.environment === environment && e.token === token);
  }

  /** Records a token; resolves once it is on disk. */
  async add(environment: string, token: string, createdAt = Date.now()): Promise<void> {
    if (this.has(environment, token)) return;
    this.entries = [...this.entries, { environment, token, createdAt }];
    await this.persist(environment);
  }

  /** Forgets a token; resolves once the file no longer lists it. */
  async remove(environment: string, token: string): Promise<void> {
    if (!this.has(environment, token)) return;
    this.entries = this.entries.filter(
      (e) => !(e.environment === environment && e.token === token),
    );
    await this.persist(environment);
  }

  /** Called with the environment's open count after every change. */
  onChange(listener: (environment: string, open: number) => void): void {
    this.listeners.add(listener);
  }

  private persist(environment: string): Promise<void> {
    const snapshot: LedgerFile = { version: 1, sessions: this.entries };
    const write = this.writes.then(async () => {
      await mkdir(dirname(this.path), { recursive: true });
      const tmp = `${this.path}.${process.pid}.tmp`;
      await writeFile(tmp, `${JSON.stringify(snapshot, null, 2)}\n`, { mode: 0o600 });
      await rename(tmp, this.path);
    });
    // Keep the chain alive after a failed write; the caller still sees the failure.
    this.writes = write.catch(() => undefined);
    return write.then(() => {
      const open = this.count(environment);
      for (const listener of this.listeners) listener(environment, open);
    });
  }
}

function parseLedger(path: string, text: string): LedgerEntry[] {
  if (text.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`the session ledger ${path} is not valid JSON; fix or remove it`, {
      cause: err,
    });
  }
  const sessions = (parsed as Partial<LedgerFile> | null)?.sessions;
  if (!Array.isArray(sessions)) {
    throw new Error(`the session ledger ${path} has no "sessions" list; fix or remove it`);
  }
  return sessions.filter(
    (e): e is LedgerEntry =>
      typeof e === 'object' &&
      e !== null &&
      typeof (e as LedgerEntry).environment === 'string' &&
      typeof (e as LedgerEntry).token === 'string',
  );
}
