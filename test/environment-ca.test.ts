import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lifecycleCheck } from '../src/checks/lifecycle/index.js';
import { pingCheck } from '../src/checks/ping/index.js';
import { sessionTokensOf } from '../src/sessions/tokens.js';
import { startSimulator, type RunningSimulator } from '../src/simulator/index.js';
import { API_KEY, testEnvironment, testRuntime } from './support/harness.js';
import { createSession } from '../src/api/sessions.js';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [API_KEY], qualifyDelayMs: 50, port: 0, tls: {} });
});
afterAll(async () => {
  await sim.close();
});

function trusted() {
  return testEnvironment(sim.url, {
    extraTrust: { caFile: '/etc/isa/sim-ca.pem', certificates: [sim.caPem ?? ''] },
  });
}

describe('an environment with ca_file', () => {
  it('pings an HTTPS API whose CA it trusts', async () => {
    const { runtime } = await testRuntime(trusted());
    try {
      expect(await runtime.run(pingCheck)).toMatchObject({ outcome: 'pass' });
    } finally {
      await runtime.close();
    }
  });

  it('runs a whole lifecycle over it, the session closed', async () => {
    const { runtime, ledger } = await testRuntime(trusted());
    try {
      expect(await runtime.run(lifecycleCheck)).toMatchObject({ outcome: 'pass' });
      expect(ledger.list()).toEqual([]);
    } finally {
      await runtime.close();
    }
  });

  it('closes leftover sessions through the reaper with the same trust', async () => {
    const { runtime, ledger, lines } = await testRuntime(trusted());
    try {
      const created = await createSession(
        runtime.client,
        { street1: '2 Pending Ave', zip: '80202', campaign_id: 'isa-monitor-test' },
        { timeoutMs: 5_000 },
      );
      const [token] = sessionTokensOf(created);
      expect(created.statusCode).toBe(201);
      await ledger.add('production', token ?? '');
      // What the sweep returns is how many are still open.
      expect(await runtime.reaper.sweep({ force: true })).toBe(0);
      expect(ledger.list()).toEqual([]);
      expect(lines.map((l) => l.msg)).toContain('closed a leftover synthetic session');
    } finally {
      await runtime.close();
    }
  });

  it('fails the ping with a network error when the CA is not trusted', async () => {
    const { runtime } = await testRuntime(testEnvironment(sim.url));
    try {
      expect(await runtime.run(pingCheck)).toMatchObject({
        outcome: 'fail',
        reason: 'network_error',
      });
    } finally {
      await runtime.close();
    }
  });
});
