/**
 * SIGKILL chaos in CI (finding 2 of the "close every session" issue, finding 1 of the "share one
 * ledger" issue): a few kills at random moments and during creates and closes, with `check` runs
 * on the same state file. CHAOS_KILLS and CHAOS_SEED run more (`bench/chaos.ts`).
 */
import { describe, expect, it } from 'vitest';
import { formatCounts } from './fuzz.js';
import { runKillChaos } from './kill-chaos.js';

const KILLS = Number(process.env['CHAOS_KILLS'] ?? 5);
const SEED = Number(process.env['CHAOS_SEED'] ?? 20261122);

describe('SIGKILL chaos', () => {
  it(`${KILLS} kills from seed ${SEED}: 0 closable sessions left open, no run's session closed under it`, async () => {
    const counts = await runKillChaos({ kills: KILLS, seed: SEED });
    console.log(formatCounts(`SIGKILL chaos (seed ${SEED})`, counts));
    expect(counts.failureDetails).toEqual([]);
    expect(counts).toMatchObject({ kills: KILLS, failures: 0, sessionsLeftOpen: 0 });
  }, 300_000);
});
