/**
 * The response fuzzer in CI: a few hundred generated bad answers from a fixed seed (findings 1 and
 * 3 of the "close every session" issue, finding 2 of the "share one ledger" issue). Every case
 * must end with a bounded reason and no key in any result or log; at the end no session that a
 * token was sent for is open, and no request went out inside a Retry-After.
 * CHAOS_FUZZ_CASES and CHAOS_SEED run more (`bench/chaos.ts` prints the same counts).
 */
import { describe, expect, it } from 'vitest';
import { formatCounts, runResponseFuzz } from './fuzz.js';

const CASES = Number(process.env['CHAOS_FUZZ_CASES'] ?? 240);
const SEED = Number(process.env['CHAOS_SEED'] ?? 20261122);

describe('response fuzzer', () => {
  it(`${CASES} fuzzed cases from seed ${SEED}: no crash, bounded reasons, every closable session closed`, async () => {
    const counts = await runResponseFuzz({ cases: CASES, seed: SEED });
    console.log(formatCounts(`response fuzz (seed ${SEED})`, counts));
    expect(counts.failureDetails).toEqual([]);
    expect(counts).toMatchObject({ cases: CASES, failures: 0, sessionsLeftOpen: 0 });
    expect(counts.retryAfterViolations).toBe(0);
  }, 120_000);
});
