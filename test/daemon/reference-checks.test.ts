/**
 * The daemon schedules the provider-list and coverage checks like any other: from their config
 * sections, on their own intervals, with their metrics on `/metrics` and their runs in
 * `/api/status`.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/index.js';
import { startDaemon, type Daemon } from '../../src/daemon.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { eventually } from '../support/cli.js';
import { BUILD } from '../support/build.js';
import { CHECK_LIST } from '../../src/checks/index.js';

const KEY = 'reference-key-0123456789abcdef';
let sim: RunningSimulator;
let daemon: Daemon;

beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [KEY] });
  // The first provider-list answer lost half its providers: the next run sees the list change.
  sim.faults.add({
    environment: 'production',
    endpoint: 'service_providers',
    fault: { kind: 'provider_list', change: 'shrink' },
    count: 1,
  });
  const dir = await mkdtemp(join(tmpdir(), 'isa-reference-'));
  const yaml = [
    'listen: { host: 127.0.0.1, port: 0 }',
    `state_file: ${join(dir, 'sessions.json')}`,
    'environments:',
    '  - name: production',
    `    base_url: ${sim.url}/env/production`,
    '    api_key_env: REFERENCE_KEY',
    '    request_budget_per_second: 20',
    '    ping: { enabled: false }',
    '    lifecycle: { enabled: false }',
    '    providers: { interval: 1s, timeout: 900ms }',
    '    coverage: { interval: 1s, timeout: 900ms, states: [CO], min_providers: 1 }',
  ].join('\n');
  const loaded = parseConfigText(yaml, {
    checks: CHECK_LIST,
    env: { REFERENCE_KEY: KEY },
    cwd: dir,
  });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  daemon = await startDaemon({
    checks: CHECK_LIST,
    config: loaded.config,
    logger: pino({ level: 'silent' }),
    build: BUILD,
    measurement: 'inline',
  });
});
afterAll(async () => {
  await daemon?.stop();
  await sim.close();
});

describe('the daemon with the reference checks', () => {
  it('runs both on their schedule and exports what they saw', async () => {
    const text = await eventually(
      async () => {
        const body = await (await fetch(`${daemon.url}/metrics`)).text();
        const changes = /isa_providers_list_changes_total\{environment="production"\} (\d+)/.exec(
          body,
        );
        const coverageOk =
          /isa_coverage_runs_total\{environment="production",result="ok"\} (\d+)/.exec(body);
        // The shrunken answer first, then the full list: one change at least.
        return Number(changes?.[1]) >= 1 && Number(coverageOk?.[1]) >= 2 ? body : undefined;
      },
      15_000,
      'provider-list and coverage runs',
    );
    // The full list again (label order is the exposition's business, not the test's).
    expect(text).toMatch(
      /isa_providers_listed\{(?=[^}]*type="fcc_provider")(?=[^}]*environment="production")[^}]*\} 7\n/,
    );
    expect(text).toContain('isa_coverage_min_providers{environment="production"} 1');
    expect(text).toMatch(/isa_coverage_providers\{environment="production"\} [1-9]/);
    expect(text).toContain(
      'isa_contract_checks_total{environment="production",check="geography_required",result="pass"}',
    );
    // Nothing of the disabled checks.
    expect(text).not.toContain('check="ping"');
    const status = (await (await fetch(`${daemon.url}/api/status`)).json()) as {
      environments: Record<string, Record<string, { last: { outcome: string } | null }>>;
    };
    expect(status.environments['production']?.['providers']?.last?.outcome).toBe('pass');
    expect(status.environments['production']?.['coverage']?.last?.outcome).toBe('pass');
  });
});
