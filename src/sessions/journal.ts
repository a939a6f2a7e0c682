/**
 * The journal of synthetic sessions an environment's checks created: a bounded, in-memory list
 * the environment runtime owns. A check that creates sessions feeds it without knowing (every
 * token written to the session ledger is journaled); a check that watches what happens to those
 * sessions elsewhere in the API (the analytics ingest lag, say) reads it through its context. So
 * checks hand sessions over without importing each other or reading each other's settings.
 *
 * Memory only: after a restart the journal starts empty. Tokens never leave the worker through
 * it: it is not logged, exported or shown.
 */
import type { CreatedSession, CreatedSessions } from '../kernel/check.js';

export type { CreatedSession, CreatedSessions } from '../kernel/check.js';

/** Entries kept by default: hours of lifecycle runs at their default interval. */
export const DEFAULT_JOURNAL_CAPACITY = 100;

export class SessionJournal implements CreatedSessions {
  private readonly entries: CreatedSession[] = [];
  private lastSeq = 0;

  constructor(
    private readonly capacity = DEFAULT_JOURNAL_CAPACITY,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Notes a session just created; the oldest entry goes when the journal is full. */
  add(token: string, campaignId: string | null): void {
    this.lastSeq += 1;
    this.entries.push({ seq: this.lastSeq, token, campaignId, createdAt: this.now() });
    if (this.entries.length > this.capacity) this.entries.shift();
  }

  since(seq: number): CreatedSession[] {
    return this.entries.filter((entry) => entry.seq > seq).map((entry) => ({ ...entry }));
  }
}
