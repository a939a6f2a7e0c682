/**
 * A 429 to the cleanup DELETE closes the environment's gate (finding 2 of the "share one ledger"
 * issue): a ping followed 333 ms later, and a second DELETE after 666 ms.
 */
import { describe, expect, it } from 'vitest';
import { lifecycleCheck } from '../../src/checks/lifecycle/index.js';
import { pingCheck } from '../../src/checks/ping/index.js';
import { testEnvironment, testRuntime } from '../support/harness.js';
import { useTestSimulator } from '../support/simulator-hooks.js';

const sim = useTestSimulator({ qualifyDelayMs: 50 });

describe('a 429 on the cleanup close', () => {
  it('closes the gate: no ping and no second DELETE inside the Retry-After', async () => {
    const env = testEnvironment(sim.url, {
      lifecycle: { addresses: [{ street1: '1 Instant Way', zip: '80202', expect: 'available' }] },
    });
    // The read fails, so the run ends early and its cleanup closes the session.
    sim.simulator.faults.add({ endpoint: 'get_session', fault: { kind: 'status', status: 500 } });
    sim.simulator.faults.add({
      endpoint: 'close_session',
      count: 1,
      fault: { kind: 'status', status: 429, retryAfterSeconds: 30 },
    });
    const { runtime } = await testRuntime(env);
    const result = await runtime.run(lifecycleCheck);
    expect(result.reason).toBe('error');
    const deleteAt = sim.requests.findLast((r) => r.method === 'DELETE')?.at ?? 0;
    expect(runtime.gate.remainingMs()).toBeGreaterThan(25_000);
    const ping = await runtime.run(pingCheck);
    await runtime.reaper.sweep();
    await runtime.close();
    expect(ping.reason).toBe('rate_limited');
    expect(sim.requests.filter((r) => r.at > deleteAt)).toEqual([]);
    sim.simulator.faults.clear();
  });
});
