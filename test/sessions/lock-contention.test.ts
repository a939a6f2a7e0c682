/**
 * Many writers of one process contend for the lock the drift file and the session ledger share
 * (src/sessions/lock.ts). A lock released while a waiter looked at it was once taken for stale,
 * and the waiter's unlink then removed the lock its next holder had just created: two holders at
 * once, whose writes of the same temporary file failed with ENOENT.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { withLock } from '../../src/sessions/lock.js';

let dir = '';
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('holds one writer at a time among 8 contenders of one process, 40 rounds each', async () => {
  dir = await mkdtemp(join(tmpdir(), 'lock-contention-'));
  const path = join(dir, 'file.json');
  let holders = 0;
  let most = 0;
  const writer = async (id: number) => {
    for (let round = 0; round < 40; round++) {
      await withLock(`${path}.lock`, async () => {
        holders++;
        most = Math.max(most, holders);
        // The same temporary name for every writer, as an atomic write by pid has.
        await writeFile(`${path}.tmp`, `${id}:${round}\n`);
        await rename(`${path}.tmp`, path);
        holders--;
      });
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, id) => writer(id)));
  expect(most).toBe(1);
}, 60_000);
