/**
 * Who owns a ledger entry: the process that created the session. A process closes only its own
 * sessions and those whose owner is gone, so `check` never closes a session the daemon is still
 * polling, and vice versa.
 */
import { randomUUID } from 'node:crypto';

export interface SessionOwner {
  pid: number;
  /** Random per process: a restarted daemon in a container often gets the same pid again. */
  id: string;
}

/** This process, as an owner. */
export function newOwner(): SessionOwner {
  return { pid: process.pid, id: randomUUID() };
}

/** True while a process with `pid` exists (EPERM: it exists but belongs to someone else). */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True when `owner` can no longer close its sessions: absent (a version-1 ledger), a process that
 * no longer exists, or an earlier process that had this very pid. Pids are assumed to be of one
 * pid namespace: processes sharing a ledger must see each other's pids.
 */
export function ownerGone(owner: SessionOwner | null | undefined, me: SessionOwner): boolean {
  if (!owner) return true;
  if (owner.id === me.id) return false;
  if (owner.pid === me.pid) return true;
  return !processAlive(owner.pid);
}
