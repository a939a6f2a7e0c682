/**
 * `check` honours its timeout when the API asks it to wait (finding 2 of the "share one ledger"
 * issue): `check lifecycle` meeting a 429 with `Retry-After: 60` took 60.7 s against a 5 s
 * timeout. It must report `rate_limited` with the time to wait, and exit within its timeout.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { runCli } from '../support/cli.js';

const KEY = 'check-rate-key-9a8b7c6d5e4f';
let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [KEY], qualifyDelayMs: 200 });
});
afterAll(() => sim.close());
afterEach(() => sim.faults.clear());

async function config(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'isa-check-rate-'));
  const path = join(dir, 'config.yaml');
  await writeFile(
    path,
    `state_file: ${join(dir, 'sessions.json')}
environments:
  - name: production
    base_url: ${sim.url}/env/production
    api_key_env: ISA_PRODUCTION_API_KEY
    request_budget_per_second: 10
    ping: { timeout: 1s }
    lifecycle:
      timeout: 5s
      poll_interval: 200ms
      poll_timeout: 3s
      addresses:
        - { street1: "2 Pending Ave", zip: "80202", expect: available }
`,
  );
  return path;
}

describe('check when the API answers 429 with Retry-After: 60', () => {
  it.each([
    ['the create', 'create_session'],
    ['a poll', 'poll_services'],
  ] as const)(
    'on %s: reports rate_limited and the wait, within the 5 s timeout',
    async (_what, endpoint) => {
      sim.faults.add({
        endpoint,
        count: 1,
        fault: { kind: 'status', status: 429, retryAfterSeconds: 60 },
      });
      const started = performance.now();
      const run = await runCli(['check', 'lifecycle', '--config', await config(), '--json'], {
        env: { ISA_PRODUCTION_API_KEY: KEY },
        timeoutMs: 30_000,
      });
      const elapsed = performance.now() - started;
      expect(run.code).toBe(1);
      const doc = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(doc).toMatchObject({ reason: 'rate_limited', retry_after_seconds: 60 });
      expect(run.stderr).toContain('rate limited: the API asks to wait 60 s');
      // 5 s timeout plus process start-up; never the 60 s of the Retry-After.
      expect(elapsed).toBeLessThan(15_000);
    },
  );
});
