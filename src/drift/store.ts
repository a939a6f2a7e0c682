/**
 * The contract baselines on disk, beside the session ledger (docs/drift.md, "On disk"): one JSON
 * file of every environment's operations, written atomically (a temporary file, then rename) so a
 * crash leaves the old file or the new one. A file that cannot be read as a baseline (torn, not a
 * regular file, too large) never stops the daemon: it is set aside as `<file>.unreadable` and
 * learning starts again.
 */
import { open, rename, unlink, writeFile, mkdir } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname, join } from 'node:path';
import type { OperationDrift } from './tracker.js';
import type { EnvironmentFacts } from './facts.js';

/** Environments → operations (and `error` for error envelopes) → their drift. */
export type DriftState = Record<string, Record<string, OperationDrift>>;

/** What the file keeps beside the baselines, for the comparison across environments. */
export interface DriftExtras {
  /** Environment → its newest data set and provider list. */
  facts: Record<string, EnvironmentFacts>;
  /** A difference between environments (its key) → since when it is seen. */
  across: Record<string, string>;
}

interface DriftFile extends Partial<DriftExtras> {
  version: 1;
  environments: DriftState;
}

/** Nothing known yet. */
export function emptyExtras(): DriftExtras {
  return { facts: {}, across: {} };
}

/** The largest baseline file read: far above 1000 environments' worth of bounded shapes. */
export const MAX_DRIFT_FILE_BYTES = 64 * 1024 * 1024;

/** Where the baselines of a monitor whose ledger is `stateFile` live. */
export function driftStorePath(stateFile: string): string {
  return join(dirname(stateFile), 'contract-baselines.json');
}

/** What reading the file found. */
export interface DriftRead {
  state: DriftState;
  extras: DriftExtras;
  /** Why the file was set aside, when it was; null when it was read or did not exist. */
  recovered: string | null;
}

/** Reads the baselines; a missing file is an empty state, an unreadable one is set aside. */
export async function readDriftState(path: string): Promise<DriftRead> {
  let text: string | null;
  try {
    text = await readBounded(path);
  } catch (err) {
    return setAside(path, describe(err));
  }
  if (text === null) return { state: {}, extras: emptyExtras(), recovered: null };
  const parsed = parseDriftFile(text);
  if (typeof parsed === 'string') return setAside(path, parsed);
  const extras = { facts: parsed.facts ?? {}, across: parsed.across ?? {} };
  return { state: parsed.environments, extras, recovered: null };
}

/** Writes the baselines (and what is kept beside them) atomically. */
export async function writeDriftState(
  path: string,
  state: DriftState,
  extras: DriftExtras = emptyExtras(),
): Promise<void> {
  const file: DriftFile = { version: 1, environments: state, ...extras };
  // The state as it is at the call: what changes while the file is written is the next write's.
  const text = `${JSON.stringify(file, infinityToNull)}\n`;
  const temporary = `${path}.${process.pid}.tmp`;
  await mkdir(dirname(path), { recursive: true });
  try {
    await writeFile(temporary, text, { mode: 0o600 });
    await rename(temporary, path);
  } catch (err) {
    await unlink(temporary).catch(() => undefined);
    throw err;
  }
}

/**
 * Reads at most `MAX_DRIFT_FILE_BYTES` of a regular file, without blocking on a FIFO or a device:
 * O_NONBLOCK makes the open return at once, and the size is checked before a byte is read.
 */
async function readBounded(path: string): Promise<string | null> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    // No file, or a state directory that is not one (then the first write says so, once).
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error('not a regular file');
    if (info.size > MAX_DRIFT_FILE_BYTES) {
      throw new Error(`larger than ${MAX_DRIFT_FILE_BYTES} bytes`);
    }
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

function parseDriftFile(text: string): DriftFile | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, nullToInfinity);
  } catch {
    return 'not JSON (a torn write?)';
  }
  const file = parsed as Partial<DriftFile> | null;
  if (typeof file !== 'object' || file === null || file.version !== 1) return 'unknown format';
  if (typeof file.environments !== 'object' || file.environments === null) {
    return 'unknown format';
  }
  return file as DriftFile;
}

async function setAside(path: string, reason: string): Promise<DriftRead> {
  await rename(path, `${path}.unreadable`).catch(() => undefined);
  return { state: {}, extras: emptyExtras(), recovered: reason };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// An empty shape's smallest size is +Infinity, which JSON cannot hold.
function infinityToNull(key: string, value: unknown): unknown {
  return key === 'min' && value === Number.POSITIVE_INFINITY ? null : value;
}

function nullToInfinity(key: string, value: unknown): unknown {
  return key === 'min' && value === null ? Number.POSITIVE_INFINITY : value;
}
