/**
 * The gate is checked after the budget wait (finding 2 of the "share one ledger" issue): a request
 * already waiting for a budget token was sent after a 429 arrived meanwhile, 11 of 32 gates
 * violated in the fuzz run.
 */
import { describe, expect, it } from 'vitest';
import { admit, RetryAfterError } from '../../src/limits/admission.js';
import { BackoffGate } from '../../src/limits/backoff-gate.js';
import { RequestBudget } from '../../src/limits/request-budget.js';

describe('admit', () => {
  it('holds a request that waited for its budget token while the gate closed', async () => {
    const gate = new BackoffGate();
    const budget = new RequestBudget(10); // one token per 100 ms
    await admit(gate, budget);
    const waiting = admit(gate, budget).then(() => performance.now());
    // A 429 arrives on another path while the request waits for its token.
    const closedAt = performance.now();
    gate.closeFor(300);
    const sentAt = await waiting;
    expect(sentAt - closedAt).toBeGreaterThanOrEqual(295);
  });

  it('fails at once, with the time to wait, when the gate outlasts what the caller may wait', async () => {
    const gate = new BackoffGate();
    gate.closeFor(60_000);
    // "At once": before the event loop turns, so before any timer could have ended a wait.
    const err = await Promise.race([
      admit(gate, new RequestBudget(10), { maxWaitMs: 5_000 }).catch((e: unknown) => e),
      new Promise((resolve) => setImmediate(() => resolve('waited'))),
    ]);
    expect(err).toBeInstanceOf(RetryAfterError);
    expect((err as RetryAfterError).retryAfterMs).toBeGreaterThan(59_000);
  });
});
