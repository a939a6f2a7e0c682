/**
 * What the daemon's learning hour does (docs/drift.md, "Learning"), for the tests that cannot
 * wait an hour: every baseline written beside `stateFile` is settled, so the next daemon compares
 * its answers with what the last one learned.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { driftStorePath } from '../../src/drift/store.js';

type Learned = Record<string, Record<string, { learningSince: string | null }>>;

/** Settles every baseline of the file; returns how many there were. */
export async function settleBaselines(stateFile: string): Promise<number> {
  const path = driftStorePath(stateFile);
  const file = JSON.parse(await readFile(path, 'utf8')) as { environments: Learned };
  let settled = 0;
  for (const operations of Object.values(file.environments)) {
    for (const drift of Object.values(operations)) {
      drift.learningSince = null;
      settled += 1;
    }
  }
  await writeFile(path, JSON.stringify(file));
  return settled;
}
