/**
 * A small inter-process lock for the session ledger: `<ledger>.lock`, created exclusively and
 * holding the owner's pid. `check` and the daemon (or two `check`s) share one ledger file; every
 * read-merge-write of it happens under this lock, which is held for milliseconds. A lock left by
 * a process that died (SIGKILL mid-write) is taken over: its pid is gone, or it is older than
 * `STALE_LOCK_MS`, far longer than any write holds it.
 */
import { mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { processAlive } from './owner.js';

/** A lock older than this is stale whoever holds it. */
export const STALE_LOCK_MS = 30_000;
/** How long a writer waits for the lock before its write fails. */
export const LOCK_WAIT_MS = 5_000;

/**
 * Locks this process holds right now. A lock file naming this process that is not in here was
 * left by an acquisition whose release failed (its directory vanished mid-write): stale.
 */
const held = new Set<string>();

/**
 * The last holder-to-be of each lock in this process. Holders of one process take turns here
 * before they touch the file: a staleness check followed by an unlink is two steps, and between
 * them another holder of this process could have created the lock the unlink then removes.
 */
const turns = new Map<string, Promise<unknown>>();

/** Runs `fn` while holding the lock at `lockPath`. */
export async function withLock<T>(lockPath: string, fn: () => Promise<T>): Promise<T> {
  const before = turns.get(lockPath) ?? Promise.resolve();
  const mine = before.then(() => holding(lockPath, fn));
  const settled = mine.catch(() => undefined);
  turns.set(lockPath, settled);
  try {
    return await mine;
  } finally {
    if (turns.get(lockPath) === settled) turns.delete(lockPath);
  }
}

async function holding<T>(lockPath: string, fn: () => Promise<T>): Promise<T> {
  const release = await acquire(lockPath);
  try {
    return await fn();
  } finally {
    await release();
  }
}

async function acquire(lockPath: string): Promise<() => Promise<void>> {
  const deadline = performance.now() + LOCK_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      held.add(lockPath);
      try {
        await handle.writeFile(`${process.pid}\n`);
      } catch (err) {
        // A full disk: give the lock back rather than leave an empty one behind.
        held.delete(lockPath);
        await unlink(lockPath).catch(() => undefined);
        throw err;
      } finally {
        await handle.close();
      }
      return async () => {
        held.delete(lockPath);
        await unlink(lockPath).catch(() => undefined);
      };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && attempt === 0) {
        await mkdir(dirname(lockPath), { recursive: true });
        continue;
      }
      if (code !== 'EEXIST') throw err;
    }
    if (await isStale(lockPath)) {
      await unlink(lockPath).catch(() => undefined);
      continue;
    }
    if (performance.now() > deadline) {
      throw new Error(`the session ledger lock ${lockPath} is held by another process`);
    }
    await delay(Math.min(50, 5 * (attempt + 1)));
  }
}

async function isStale(lockPath: string): Promise<boolean> {
  try {
    const [text, info] = await Promise.all([readFile(lockPath, 'utf8'), stat(lockPath)]);
    const pid = Number(text.trim());
    if (Date.now() - info.mtimeMs > STALE_LOCK_MS) return true;
    // An empty file is a lock being written right now, not a stale one.
    if (text.trim() === '') return false;
    if (pid === process.pid) return !held.has(lockPath);
    return !Number.isSafeInteger(pid) || !processAlive(pid);
  } catch {
    // Gone between the attempt and the look: not stale. Taking it for stale would unlink the
    // lock another holder may have created since; the next attempt's exclusive create decides.
    return false;
  }
}
