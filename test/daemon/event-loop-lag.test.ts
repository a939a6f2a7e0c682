/**
 * The measuring thread's event-loop lag is sampled while an API call is in flight, and not while
 * a run waits between its calls: a lifecycle run spends most of its time waiting for budget
 * tokens, and samples there described moments nobody measured (measurement/lag.ts).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { eventually } from '../support/cli.js';
import { startDaemonFromYaml } from '../support/daemon.js';
import { checksOffLines } from '../support/checks-off.js';

const KEY = 'lag-key-0123456789abcdef';
let sim: RunningSimulator;
let daemon: Daemon;

beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [KEY] });
  const dir = await mkdtemp(join(tmpdir(), 'isa-lag-'));
  daemon = await startDaemonFromYaml(
    [
      'listen: { host: 127.0.0.1, port: 0 }',
      `state_file: ${join(dir, 'sessions.json')}`,
      'environments:',
      '  - name: sandbox',
      `    base_url: ${sim.url}/env/sandbox`,
      '    api_key_env: LAG_KEY',
      // Two tokens a second: the run's four calls are spread over 1.5 s of budget waits.
      '    request_budget_per_second: 2',
      '    ping: { enabled: false }',
      '    lifecycle:',
      '      interval: 5s',
      '      timeout: 4s',
      '      poll_timeout: 3s',
      "      addresses: [{ street1: '1 Instant Way', zip: '80202', expect: available }]",
      ...checksOffLines(['ping', 'lifecycle']),
    ].join('\n'),
    { LAG_KEY: KEY },
    dir,
  );
});
afterAll(async () => {
  await daemon?.stop();
  await sim.close();
});

/** The sum of the samples of `name` whose labels include `labels` (`name{...} value` lines). */
function total(text: string, name: string, labels = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (match?.[1] === name && (match[2] ?? '').includes(labels)) sum += Number(match[3]);
  }
  return sum;
}

describe('event-loop lag of the measuring thread', () => {
  it('is sampled while calls are in flight, not through a run’s budget waits', async () => {
    const text = await eventually(
      async () => {
        const body = await (await fetch(`${daemon.url}/metrics`)).text();
        return total(body, 'isa_lifecycle_runs_total', 'result="success"') >= 1 ? body : undefined;
      },
      15_000,
      'a lifecycle run',
    );
    const samples = total(text, 'isa_measurement_event_loop_lag_seconds_count');
    const calls = total(text, 'isa_lifecycle_step_duration_seconds_count');
    const callSeconds = total(text, 'isa_lifecycle_step_duration_seconds_sum');
    expect(calls).toBeGreaterThanOrEqual(4);
    // Every 50 ms of a spell of calls, plus the one each spell ends with (the run's last spell may
    // not have sent its sample yet). Samples through the budget waits as well would be one per
    // 50 ms of the run's 1.5 s and more: 30.
    expect(samples).toBeGreaterThanOrEqual(1);
    expect(samples).toBeLessThanOrEqual(calls + Math.ceil(callSeconds / 0.05));
  });
});
