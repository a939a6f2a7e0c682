import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pingCheck } from '../src/checks/ping.js';
import { EnvironmentRuntime } from '../src/environment.js';
import { SessionLedger } from '../src/sessions/ledger.js';
import {
  captureLogger,
  startTestSimulator,
  testEnvironment,
  type TestSimulator,
} from './support/harness.js';

let sim: TestSimulator;
beforeAll(async () => {
  sim = await startTestSimulator();
});
afterAll(() => sim.close());

describe('EnvironmentRuntime', () => {
  it('tells onRunStart when each run starts and ends (the lag sampler samples densely then)', async () => {
    const ledger = await SessionLedger.open(
      join(await mkdtemp(join(tmpdir(), 'isa-test-')), 'sessions.json'),
    );
    const events: string[] = [];
    const runtime = new EnvironmentRuntime(testEnvironment(sim.url), {
      ledger,
      userAgent: 'isa-monitor/test',
      log: captureLogger().log,
      onRunStart: () => {
        events.push(`start, ${sim.requests.length} requests`);
        return () => events.push(`end, ${sim.requests.length} requests`);
      },
    });
    try {
      const before = sim.requests.length;
      const run = runtime.run(pingCheck);
      // Called synchronously, before the run's request goes out.
      expect(events).toEqual([`start, ${before} requests`]);
      const result = await run;
      expect(result.outcome).toBe('pass');
      expect(events).toEqual([`start, ${before} requests`, `end, ${before + 1} requests`]);
    } finally {
      await runtime.close();
      ledger.close();
    }
  });
});
