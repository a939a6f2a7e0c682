import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { responseSpecOf } from '../../src/checks/index.js';
import { acceptBaselines, DriftBook, type DriftCounts } from '../../src/drift/book.js';
import { readDriftState } from '../../src/drift/store.js';
import { LEARNING } from '../../src/drift/tracker.js';
import { withLock } from '../../src/sessions/lock.js';

const START = Date.parse('2026-11-28T00:00:00Z');
const MINUTE = 60_000;
const open: DriftBook[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((book) => book.close()));
});

function ping(timestamp: string, extra: Record<string, unknown> = {}) {
  return {
    operation: 'ping',
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: { message: 'pong', timestamp, ...extra },
    bodyBytes: 60,
  };
}

async function scratchBook(clock: { t: number }) {
  const path = join(await mkdtemp(join(tmpdir(), 'drift-book-')), 'contract-baselines.json');
  const changes: { environment: string; operation: string; counts: DriftCounts }[] = [];
  const { book, recovered } = await DriftBook.open({
    path,
    specOf: responseSpecOf,
    onChange: (environment, operation, counts) => changes.push({ environment, operation, counts }),
    withLock: (fn) => withLock(`${path}.lock`, fn),
    onWriteError: (err) => {
      throw err;
    },
    now: () => new Date(clock.t),
  });
  open.push(book);
  return { path, book, changes, recovered };
}

/** `isa-monitor drift accept` of production's ping, by ops@bastion, on the file at `path`. */
function acceptPing(path: string, clock: { t: number }) {
  return acceptBaselines({
    path,
    environment: 'production',
    operation: 'ping',
    by: 'ops@bastion',
    now: new Date(clock.t),
    withLock: (fn) => withLock(`${path}.lock`, fn),
  });
}

/** Pings once a minute until the baseline settled. */
function settle(book: DriftBook, clock: { t: number }): void {
  for (let i = 0; i <= Math.max(LEARNING.responses, LEARNING.ms / MINUTE); i += 1) {
    book.observe('production', ping(new Date(clock.t).toISOString()));
    clock.t += MINUTE;
  }
}

describe("every environment's drift, kept on disk", () => {
  it('reports an operation whose differences change, and writes them at once', async () => {
    const clock = { t: START };
    const { path, book, changes } = await scratchBook(clock);
    settle(book, clock);
    // Its first answer only: the operation is reported from then on.
    expect(changes).toEqual([
      {
        environment: 'production',
        operation: 'ping',
        counts: { breaking: 0, warning: 0, info: 0 },
      },
    ]);
    changes.length = 0;
    book.observe('production', ping('2026-11-28T02:00:00Z', { deprecation: 'v2' }));
    expect(changes).toEqual([
      {
        environment: 'production',
        operation: 'ping',
        counts: { breaking: 0, warning: 0, info: 1 },
      },
    ]);
    await book.sync();
    const onDisk = (await readDriftState(path)).state['production']?.['ping'];
    expect(Object.keys(onDisk?.differences ?? {})).toEqual(['new_field deprecation']);
  });

  it('names a required field gone as breaking, and error envelopes apart from answers', async () => {
    const clock = { t: START };
    const { book, changes } = await scratchBook(clock);
    settle(book, clock);
    book.observe('production', { ...ping('x'), body: { message: 'pong' } });
    expect(changes.at(-1)?.counts).toEqual({ breaking: 1, warning: 0, info: 0 });
    book.observe('production', { ...ping('x'), statusCode: 429, body: { message: 'slow down' } });
    expect(book.counts().map((c) => c.operation)).toEqual(['ping', 'error']);
  });

  it('takes an accept made on the file, and never writes over it', async () => {
    const clock = { t: START };
    const { path, book, changes } = await scratchBook(clock);
    settle(book, clock);
    book.observe('production', ping('2026-11-28T02:00:00Z', { deprecation: 'v2' }));
    await book.sync(true);
    const result = await acceptPing(path, clock);
    expect(result).toEqual({ accepted: ['ping'], cleared: 1 });
    await book.sync(true);
    expect(changes.at(-1)?.counts).toEqual({ breaking: 0, warning: 0, info: 0 });
    book.observe('production', ping('2026-11-28T02:01:00Z', { deprecation: 'v2' }));
    await book.sync(true);
    const onDisk = (await readDriftState(path)).state['production']?.['ping'];
    expect(onDisk?.accepted?.by).toBe('ops@bastion');
    expect(onDisk?.differences).toEqual({});
  });

  it('takes an accept as the file changes, and its lock only for an accept or a write due', async () => {
    const clock = { t: START };
    const path = join(await mkdtemp(join(tmpdir(), 'drift-book-')), 'contract-baselines.json');
    let locks = 0;
    const { book } = await DriftBook.open({
      path,
      specOf: responseSpecOf,
      onChange: () => {},
      withLock: (fn) => {
        locks += 1;
        return withLock(`${path}.lock`, fn);
      },
      onWriteError: (err) => {
        throw err;
      },
      now: () => new Date(clock.t),
    });
    open.push(book);
    settle(book, clock);
    book.observe('production', ping('2026-11-28T02:00:00Z', { deprecation: 'v2' }));
    await book.sync(true);
    const written = locks;
    expect(written).toBeGreaterThan(0);
    // At rest: nothing learned since, the file as written.
    await book.sync();
    await book.sync();
    expect(locks).toBe(written);
    // An accept on the file: the file's change event has the book take it, under the lock, with
    // no sync asked for (the periodic one is a minute away).
    await acceptPing(path, clock);
    const infoNow = () => book.counts().find((c) => c.operation === 'ping')?.counts.info;
    for (let waited = 0; infoNow() !== 0 && waited < 5_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(infoNow()).toBe(0);
    expect(locks).toBe(written + 1);
  });

  it('starts where it stopped: the baseline and the open differences survive a restart', async () => {
    const clock = { t: START };
    const first = await scratchBook(clock);
    settle(first.book, clock);
    first.book.observe('production', ping('x', { deprecation: 'v2' }));
    await first.book.close();
    const { book } = await DriftBook.open({
      path: first.path,
      specOf: responseSpecOf,
      onChange: () => undefined,
      withLock: (fn) => withLock(`${first.path}.lock`, fn),
      onWriteError: () => undefined,
    });
    open.push(book);
    expect(book.counts()).toEqual([
      {
        environment: 'production',
        operation: 'ping',
        counts: { breaking: 0, warning: 0, info: 1 },
      },
    ]);
  });
});
