/**
 * Retry-After chaos in CI (docs/architecture.md, "No environment goes silent"): four environments
 * with 1 s pings, each gated at random, seeded moments by a 429 or a 503 with Retry-After on every
 * operation in turn. Every environment's pings resume within one interval of each gate's end, no
 * session is left open, and no abort signal collects listeners. CHAOS_SEED changes the seed;
 * `bench/chaos.ts --gates-environments 8 --gates-seconds 600` runs the larger campaign.
 */
import { describe, expect, it } from 'vitest';
import { formatRetryAfterCounts, runRetryAfterChaos } from './retry-after-chaos.js';

const SEED = Number(process.env['CHAOS_SEED'] ?? 20261127);

describe('Retry-After chaos', () => {
  it(`four environments gated at random from seed ${SEED}: pings resume within one interval`, async () => {
    const counts = await runRetryAfterChaos({ environments: 4, durationMs: 40_000, seed: SEED });
    console.log(formatRetryAfterCounts(`Retry-After chaos (seed ${SEED})`, counts));
    for (const e of counts.perEnvironment) console.log(`  ${JSON.stringify(e)}`);
    expect(counts.gatesLived).toBeGreaterThan(counts.environments * 3);
    // One interval (1 s) plus 500 ms of tolerance for a busy machine, per environment.
    expect(counts.perEnvironment.filter((e) => e.longestSilenceMs > 1_500)).toEqual([]);
    expect(counts.silentEnvironments).toBe(0);
    expect(counts.sessionsLeftOpen).toBe(0);
    expect(counts.listenerWarnings).toBe(0);
  }, 120_000);
});
