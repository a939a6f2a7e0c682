/**
 * Configuration reload (docs/configuration.md, "Reload") through a real daemon process and real
 * SIGHUPs, against the simulator over loopback: an environment and a maintenance window added, an
 * invalid file refused with the old configuration left running, an environment removed, and a
 * reload during a lifecycle run whose session is then still closed.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { eventually, metricSum, startDaemonProcess, type DaemonProcess } from '../support/cli.js';
import { checksOff } from '../support/checks-off.js';

const SANDBOX_KEY = 'reload-sandbox-key-5e4d3c2b1a';
const PRODUCTION_KEY = 'reload-production-key-9f8e7d6c';
let sim: RunningSimulator;
let dir: string;
const daemons: DaemonProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [SANDBOX_KEY, PRODUCTION_KEY], qualifyDelayMs: 200 });
  dir = await mkdtemp(join(tmpdir(), 'isa-reload-'));
  // Production's key comes from a file, which a reload reads again.
  await writeFile(join(dir, 'production.key'), `${PRODUCTION_KEY}\n`, { mode: 0o600 });
});
afterAll(async () => {
  for (const daemon of daemons) daemon.child.kill('SIGKILL');
  await sim.close();
});

interface EnvironmentOptions {
  maintenance?: unknown[];
  lifecycle?: Record<string, unknown>;
  street1?: string;
}

function environment(name: 'sandbox' | 'production', opts: EnvironmentOptions = {}) {
  return {
    name,
    base_url: `${sim.url}/env/${name}`,
    ...(name === 'sandbox'
      ? { api_key_env: 'ISA_SANDBOX_API_KEY' }
      : { api_key_file: join(dir, 'production.key') }),
    ...(opts.lifecycle ? { request_budget_per_second: 10 } : {}),
    ping: { interval: '1s', timeout: '900ms' },
    lifecycle: opts.lifecycle
      ? {
          ...opts.lifecycle,
          addresses: [{ street1: opts.street1 ?? '2 Pending Ave', zip: '80202', expect: 'any' }],
        }
      : { enabled: false },
    ...checksOff(['ping', 'lifecycle']),
    ...(opts.maintenance ? { maintenance: opts.maintenance } : {}),
  };
}

async function writeConfig(path: string, environments: unknown[], stateFile: string) {
  await writeFile(
    path,
    stringify({
      listen: { host: '127.0.0.1', port: 0 },
      state_file: stateFile,
      shutdown_timeout: '5s',
      environments,
    }),
  );
}

/** Sends SIGHUP and waits for the reload's outcome line after it; returns it and the time taken. */
async function hangUp(
  daemon: DaemonProcess,
  outcome: string,
): Promise<{ line: Record<string, unknown>; ms: number }> {
  const before = daemon.output().length;
  const sent = performance.now();
  daemon.child.kill('SIGHUP');
  const raw = await eventually(
    () =>
      daemon
        .output()
        .slice(before)
        .split('\n')
        .find((l) => l.includes(`"msg":"${outcome}`)),
    10_000,
    `"${outcome}" after SIGHUP`,
  );
  return { line: JSON.parse(raw) as Record<string, unknown>, ms: performance.now() - sent };
}

const attempts = (url: string, env: string) =>
  metricSum(url, new RegExp(`^isa_ping_attempts_total\\{environment="${env}"`));

/** Waits until `env`'s ping count rises by at least two from now. */
async function pingsGoOn(url: string, env: string): Promise<void> {
  const start = await attempts(url, env);
  await eventually(async () => (await attempts(url, env)) >= start + 2, 10_000, `${env} pings`);
}

describe('SIGHUP reloads the configuration', () => {
  it('adds an environment and a window, refuses an invalid file, removes an environment', async () => {
    const configPath = join(dir, 'config.yaml');
    const stateFile = join(dir, 'sessions.json');
    await writeConfig(configPath, [environment('sandbox')], stateFile);
    const daemon = startDaemonProcess(['--config', configPath], {
      ISA_SANDBOX_API_KEY: SANDBOX_KEY,
    });
    daemons.push(daemon);
    const url = await daemon.url;
    await pingsGoOn(url, 'sandbox');
    expect(await metricSum(url, /^isa_config_last_reload_successful /)).toBe(1);
    const startedAt = await metricSum(url, /^isa_config_last_reload_success_timestamp_seconds /);
    expect(startedAt).toBeGreaterThan(Date.now() / 1000 - 60);

    // Production (its key from a file) and a window on the sandbox, active now.
    const window = {
      start: new Date(Date.now() - 60_000).toISOString(),
      end: new Date(Date.now() + 3_600_000).toISOString(),
      reason: 'partner upgrade',
    };
    await writeConfig(
      configPath,
      [environment('sandbox', { maintenance: [window] }), environment('production')],
      stateFile,
    );
    const added = await hangUp(daemon, 'configuration reloaded');
    expect(added.line).toMatchObject({ added: ['production'], changed: ['sandbox'], removed: [] });
    // The changed environment's ping keeps its place in the minute: no run sooner than due.
    const sandboxPing = (schedule: unknown) =>
      (schedule as Array<{ environment: string; check: string; offsetMs: number }>).find(
        (task) => task.environment === 'sandbox' && task.check === 'ping',
      );
    const started = JSON.parse(
      daemon
        .output()
        .split('\n')
        .find((l) => l.includes('"msg":"schedules started"'))!,
    ) as { schedule: unknown };
    expect(sandboxPing(added.line['schedule'])).toEqual(sandboxPing(started.schedule));
    await pingsGoOn(url, 'production');
    await pingsGoOn(url, 'sandbox');
    expect(await metricSum(url, /^isa_maintenance_active\{environment="sandbox"/)).toBe(1);
    expect(await metricSum(url, /^isa_maintenance_active\{environment="production"/)).toBe(0);
    const status = (await (await fetch(`${url}/api/status`)).json()) as {
      maintenance: Record<string, { state: string; reason: string } | null>;
    };
    expect(status.maintenance['sandbox']).toMatchObject({
      state: 'active',
      reason: 'partner upgrade',
    });
    expect(await metricSum(url, /^isa_config_last_reload_successful /)).toBe(1);

    // An invalid file: every problem logged, nothing changes, the gauge says so.
    await writeFile(
      configPath,
      stringify({
        state_file: stateFile,
        environments: [
          { name: 'sandbox', base_url: 'not a url', api_key_env: 'ISA_SANDBOX_API_KEY' },
          { name: 'production' },
        ],
      }),
    );
    const refused = await hangUp(daemon, 'configuration reload refused');
    expect(refused.line['problems']).toBeGreaterThanOrEqual(2);
    const problems = daemon
      .output()
      .split('\n')
      .filter((l) => l.includes('"msg":"configuration: environments['));
    expect(problems.join('\n')).toContain('environments[0].base_url');
    expect(problems.join('\n')).toContain('environments[1]');
    expect(await metricSum(url, /^isa_config_last_reload_successful /)).toBe(0);
    await pingsGoOn(url, 'production');
    await pingsGoOn(url, 'sandbox');

    // Production removed: its series go, the sandbox goes on, the gauge is 1 again.
    await writeConfig(configPath, [environment('sandbox')], stateFile);
    const removed = await hangUp(daemon, 'configuration reloaded');
    expect(removed.line).toMatchObject({ removed: ['production'], changed: ['sandbox'] });
    await pingsGoOn(url, 'sandbox');
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).not.toContain('environment="production"');
    expect(await metricSum(url, /^isa_config_last_reload_successful /)).toBe(1);
    expect(await metricSum(url, /^isa_maintenance_active\{environment="sandbox"/)).toBe(0);
    expect(
      await metricSum(url, /^isa_config_last_reload_success_timestamp_seconds /),
    ).toBeGreaterThanOrEqual(startedAt);

    // An unchanged file changes nothing and keeps every schedule where it was.
    const same = await hangUp(daemon, 'configuration reloaded');
    expect(same.line).toMatchObject({ added: [], changed: [], removed: [], unchanged: 1 });
    expect(same.line['schedule']).toEqual(removed.line['schedule']);

    for (const key of [SANDBOX_KEY, PRODUCTION_KEY]) expect(daemon.output()).not.toContain(key);
    console.log(
      `reload in force after (daemon's own durationMs): ${String(added.line['durationMs'])} ms ` +
        `(add), ${String(removed.line['durationMs'])} ms (remove), ` +
        `${String(same.line['durationMs'])} ms (unchanged); ` +
        `SIGHUP to "configuration reloaded", polled every 100 ms: ${added.ms.toFixed(0)} ms (add), ` +
        `${removed.ms.toFixed(0)} ms (remove), ${same.ms.toFixed(0)} ms (unchanged); ` +
        `refused in ${refused.ms.toFixed(0)} ms`,
    );
    daemon.child.kill('SIGTERM');
    expect((await daemon.exit).code).toBe(0);
  }, 90_000);

  it('closes the session of a lifecycle run in flight when its environment is removed', async () => {
    const configPath = join(dir, 'lifecycle.yaml');
    const stateFile = join(dir, 'lifecycle-sessions.json');
    // A session that never qualifies: the run polls until its give-up, 4 s after the reload.
    const lifecycle = {
      interval: '10s',
      timeout: '9s',
      poll_interval: '200ms',
      poll_timeout: '4s',
    };
    await writeConfig(
      configPath,
      [environment('production', { lifecycle, street1: '6 Forever Pending Ct' })],
      stateFile,
    );
    const daemon = startDaemonProcess(['--config', configPath], {
      ISA_SANDBOX_API_KEY: SANDBOX_KEY,
    });
    daemons.push(daemon);
    await daemon.url;
    const session = await eventually(
      () => sim.state.openSessions('production')[0],
      20_000,
      'a pending lifecycle session',
    );
    await eventually(
      async () => (await readFile(stateFile, 'utf8').catch(() => '')).includes(session.token),
      5_000,
      'the token in the ledger',
    );
    // The environment goes; the run in flight finishes under its old settings and closes it.
    await writeConfig(configPath, [environment('sandbox')], stateFile);
    const reloaded = await hangUp(daemon, 'configuration reloaded');
    expect(reloaded.line).toMatchObject({ added: ['sandbox'], removed: ['production'] });
    const run = await eventually(
      () =>
        daemon
          .output()
          .split('\n')
          .find((l) => l.includes('"msg":"lifecycle ')),
      20_000,
      'the lifecycle run to end',
    );
    expect(JSON.parse(run)).toMatchObject({ environment: 'production', reason: 'qualify_timeout' });
    await eventually(
      () => sim.state.openSessions('production').length === 0,
      10_000,
      'the session closed on the simulator',
    );
    await eventually(
      async () => !(await readFile(stateFile, 'utf8')).includes(session.token),
      5_000,
      'the token gone from the ledger',
    );
    daemon.child.kill('SIGTERM');
    expect((await daemon.exit).code).toBe(0);
  }, 90_000);
});
