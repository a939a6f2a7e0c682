/**
 * The sweep after a run closes leftovers with that check's own request timeout, within its cleanup
 * bound, even when another check of the environment has a longer one; the reaper's own sweeps
 * (start-up, leftovers) keep the longest (docs/configuration.md, "The session ledger").
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSession } from '../src/api/sessions.js';
import { lifecycleCheck } from '../src/checks/lifecycle/index.js';
import type { ApiCall } from '../src/kernel/api.js';
import { sessionTokensOf } from '../src/sessions/tokens.js';
import { startSimulator, type RunningSimulator } from '../src/simulator/index.js';
import { API_KEY, testEnvironment, testRuntime } from './support/harness.js';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [API_KEY], qualifyDelayMs: 50, port: 0 });
});
afterAll(async () => {
  await sim.close();
});

describe('the sweep after a run', () => {
  it("closes with the check's own request timeout, not the longest of the environment", async () => {
    const { runtime, ledger } = await testRuntime(
      testEnvironment(sim.url, {
        lifecycle: { requestTimeoutMs: 2_000 },
        ping: { timeoutMs: 60_000, requestTimeoutMs: 60_000 },
      }),
    );
    const closes: number[] = [];
    const request = runtime.client.request.bind(runtime.client);
    vi.spyOn(runtime.client, 'request').mockImplementation((call: ApiCall) => {
      if (call.method === 'DELETE') closes.push(call.timeoutMs);
      return request(call);
    });
    const leave = async (): Promise<void> => {
      const created = await createSession(
        runtime.client,
        { street1: '2 Pending Ave', zip: '80202', campaign_id: 'isa-monitor-test' },
        { timeoutMs: 5_000 },
      );
      await ledger.add('production', sessionTokensOf(created)[0] ?? '');
    };
    try {
      await leave();
      expect(await runtime.sweepAfter(lifecycleCheck)).toBe(0);
      expect(closes).toEqual([2_000]);
      expect(runtime.cleanupTimeoutFor(lifecycleCheck)).toBe(2_000 + 5_000);
      // The reaper's own sweep keeps the longest request timeout of the environment's checks.
      await leave();
      expect(await runtime.reaper.sweep({ force: true })).toBe(0);
      expect(closes).toEqual([2_000, 60_000]);
    } finally {
      await runtime.close();
    }
  });
});
