/**
 * A reload changes an environment without letting go of what the API asked (docs/configuration.md,
 * "Reload"): a Retry-After in force before the reload still holds after it, the schedule keeps
 * its offsets, and the metrics of what stays go on counting. In-process daemon, measurement
 * inline, simulator over loopback.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/index.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { eventually, metricSum } from '../support/cli.js';
import { startDaemonFromYaml } from '../support/daemon.js';
import { checksOffLines } from '../support/checks-off.js';

const KEY = 'reload-inline-key-1a2b3c4d5e';
let sim: RunningSimulator;
let dir: string;
beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [KEY] });
  dir = await mkdtemp(join(tmpdir(), 'isa-reload-inline-'));
});
afterAll(() => sim.close());

function yaml(warning: string): string {
  return [
    'listen: { host: 127.0.0.1, port: 0 }',
    `state_file: ${join(dir, 'sessions.json')}`,
    'environments:',
    '  - name: production',
    `    base_url: ${sim.url}/env/production`,
    '    api_key_env: RELOAD_KEY',
    `    thresholds: { expected: 50ms, warning: ${warning}, critical: 1s }`,
    '    ping: { interval: 1s, timeout: 900ms }',
    ...checksOffLines(['ping']),
  ].join('\n');
}

function config(warning: string) {
  const loaded = parseConfigText(yaml(warning), {
    checks: CHECK_LIST,
    env: { RELOAD_KEY: KEY },
    cwd: dir,
  });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  return loaded.config;
}

describe('reloading a changed environment', () => {
  it('keeps a Retry-After in force and the counters counting', async () => {
    const daemon = await startDaemonFromYaml(yaml('500ms'), { RELOAD_KEY: KEY }, dir);
    try {
      const pings = () =>
        metricSum(daemon.url, /^isa_ping_attempts_total\{environment="production"/);
      const backoffSkips = () =>
        metricSum(
          daemon.url,
          /^isa_checks_skipped_total\{environment="production",check="ping",reason="rate_limit_backoff"/,
        );
      await eventually(async () => (await pings()) >= 2, 10_000, 'two pings');
      // One 429 asking for 4 s; the reload follows at once.
      sim.faults.add({
        environment: 'production',
        endpoint: 'ping',
        count: 1,
        fault: { kind: 'status', status: 429, retryAfterSeconds: 4 },
      });
      await eventually(
        async () =>
          (await metricSum(
            daemon.url,
            /^isa_ping_attempts_total\{environment="production",result="rate_limited"/,
          )) >= 1,
        10_000,
        'the 429',
      );
      const limitedAt = performance.now();
      const before = await pings();
      await daemon.reload(config('400ms'));
      // The new thresholds are in force...
      expect(
        await metricSum(
          daemon.url,
          /^isa_latency_threshold_seconds\{level="warning",environment="production"/,
        ),
      ).toBe(0.4);
      // ...and the wait the API asked for still holds: pings are skipped, not sent, until it ends.
      await eventually(async () => (await backoffSkips()) >= 2, 10_000, 'backoff skips');
      const afterSkips = await pings();
      expect(performance.now() - limitedAt).toBeLessThan(4_000);
      expect(afterSkips).toBe(before);
      // Counters went on from where they were (a reload is not a restart), and pings resume.
      await eventually(async () => (await pings()) > before, 10_000, 'pings after the wait');
      expect(performance.now() - limitedAt).toBeGreaterThanOrEqual(3_500);
    } finally {
      await daemon.stop();
    }
  }, 40_000);
});
