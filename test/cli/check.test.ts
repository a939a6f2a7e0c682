import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { createLogger } from '../../src/logging.js';
import { runCli } from '../support/cli.js';
import { findCheck } from '../../src/checks/index.js';

const KEY = 'check-cli-key-5f1e2d3c4b5a';
let sim: RunningSimulator;
/** The simulator's log lines, to learn the request id it gave each request. */
const simLog: Array<{ msg?: string; method?: string; url?: string; requestId?: string }> = [];

beforeAll(async () => {
  const logger = createLogger({
    level: 'debug',
    secrets: [],
    destination: { write: (line: string) => void simLog.push(JSON.parse(line) as never) },
  });
  sim = await startSimulator({ apiKeys: [KEY], qualifyDelayMs: 200, logger });
});
afterAll(() => sim.close());
afterEach(() => sim.faults.clear());

const base = () => ['--base-url', `${sim.url}/env/production`, '--api-key-env', 'ISA_TEST_KEY'];
const env = { ISA_TEST_KEY: KEY };

describe('isa-monitor check', () => {
  it('lifecycle --json prints the contract document and exits 0 on a healthy API', async () => {
    const run = await runCli(
      ['check', 'lifecycle', ...base(), '--address', '2 Pending Ave, 80202', '--json'],
      { env },
    );
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(doc).toMatchObject({
      check: 'lifecycle',
      environment: 'cli',
      outcome: 'pass',
      reason: null,
      latency_class: null,
      qualify_status: 'available',
    });
    expect(typeof doc['duration_ms']).toBe('number');
    const steps = doc['steps'] as Array<Record<string, unknown>>;
    expect(steps.map((s) => s['name'])).toEqual(
      expect.arrayContaining(['create', 'poll', 'get', 'close', 'verify_gone']),
    );
    for (const step of steps) {
      expect(Object.keys(step)).toEqual(
        expect.arrayContaining([
          'name',
          'method',
          'path',
          'status_code',
          'duration_ms',
          'request_id',
          'error',
        ]),
      );
    }
    expect(sim.state.openSessions()).toEqual([]);
  });

  it('exits 1 against a fault and names the reason and the API request_id', async () => {
    sim.faults.add({ endpoint: 'create_session', fault: { kind: 'status', status: 500 } });
    const run = await runCli(['check', 'lifecycle', ...base(), '--json'], { env });
    expect(run.code).toBe(1);
    const doc = JSON.parse(run.stdout) as {
      outcome: string;
      reason: string;
      steps: Array<{ request_id: string | null }>;
    };
    expect(doc.outcome).toBe('fail');
    expect(doc.reason).toBe('create_failed');
    // The id the simulator gave the failed creation request, as the API's operator would see it.
    const create = simLog.findLast((l) => l.msg === 'request' && l.method === 'POST');
    expect(create?.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(doc.steps[0]?.request_id).toBe(create?.requestId);
  });

  it('analytics --json syncs every page, exits 0, and exits 1 when the API answers 403', async () => {
    const pass = await runCli(['check', 'analytics', ...base(), '--json'], { env });
    expect(pass.code).toBe(0);
    const doc = JSON.parse(pass.stdout) as Record<string, unknown>;
    expect(doc).toMatchObject({ check: 'analytics', outcome: 'pass', ingest_awaiting: '0' });
    expect((doc['steps'] as Array<{ name: string }>).map((s) => s.name)).toContain('sync');

    sim.faults.add({ endpoint: 'analytics', fault: { kind: 'status', status: 403 } });
    const fail = await runCli(['check', 'analytics', ...base(), '--json'], { env });
    expect(fail.code).toBe(1);
    expect(JSON.parse(fail.stdout)).toMatchObject({ outcome: 'fail', reason: 'forbidden' });
  });

  // Each case runs where its check is registered: a build without that check has no such command.
  it.each(
    (
      [
        [
          'providers',
          'service_providers',
          { kind: 'provider_list', change: 'misordered' },
          'order_violation',
        ],
        [
          'coverage',
          'coverage',
          { kind: 'coverage', change: 'geography_optional' },
          'geography_not_required',
        ],
      ] as const
    ).filter(([check]) => findCheck(check) !== undefined),
  )(
    '%s --json exits 0 on a healthy API and 1 on a breach of the API contract',
    async (check, endpoint, fault, reason) => {
      const pass = await runCli(['check', check, ...base(), '--json'], { env });
      expect(pass.code).toBe(0);
      const passed = JSON.parse(pass.stdout) as Record<string, unknown>;
      expect(passed).toMatchObject({ check, outcome: 'pass', reason: null });
      expect(Number(passed['providers'])).toBeGreaterThan(0);

      sim.faults.add({ endpoint, fault });
      const fail = await runCli(['check', check, ...base(), '--json'], { env });
      expect(fail.code).toBe(1);
      expect(JSON.parse(fail.stdout)).toMatchObject({ check, outcome: 'fail', reason });
    },
  );

  it('providers prints its counts by type in the trace', async () => {
    const run = await runCli(['check', 'providers', ...base()], { env });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/ok\s+service_providers\s+GET\s+\/service_providers\s+200/);
    expect(run.stdout).toMatch(/providers 9 \(fcc_provider 7, supplemental_brand 2\)/);
  });

  it('ping prints a human-readable trace with the latency class', async () => {
    const run = await runCli(['check', 'ping', ...base()], { env });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/ping check · environment cli/);
    expect(run.stdout).toMatch(/ok\s+ping\s+GET\s+\/ping\s+200/);
    expect(run.stdout).toMatch(/^PASS in .* · latency (expected|elevated)/m);
  });

  it('ping exits 1 when the API rejects the key, and never prints the key', async () => {
    const run = await runCli(['check', 'ping', ...base(), '--json', '--verbose'], {
      env: { ISA_TEST_KEY: 'wrong-key-9a8b7c6d5e' },
    });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'fail', reason: 'unauthorized' });
    expect(run.stdout + run.stderr).not.toContain('wrong-key-9a8b7c6d5e');
  });

  it('reads the key from a file', async () => {
    const { mkdtemp, writeFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const file = join(await mkdtemp(join(tmpdir(), 'isa-key-')), 'key');
    await writeFile(file, `${KEY}\n`);
    const run = await runCli([
      'check',
      'ping',
      '--base-url',
      `${sim.url}/env/production`,
      '--api-key-file',
      file,
    ]);
    expect(run.code).toBe(0);
  });

  it('is a usage error (2) without a key source', async () => {
    const run = await runCli(['check', 'ping', '--base-url', sim.url]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--api-key-env VAR or --api-key-file FILE');
  });

  it('is a config error (2), naming the variable, when the key variable is unset', async () => {
    const run = await runCli(['check', 'ping', ...base()]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('ISA_TEST_KEY');
  });
});
