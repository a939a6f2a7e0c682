/**
 * Sessions of an environment a reload removed, left open by a process killed before its own sweep
 * (docs/configuration.md, "Reload"): the next start closes them with the base URL and key their
 * ledger entries recorded, and counts under the removed environment's own name what it cannot
 * close, so `IsaSyntheticSessionsLeaking` sees it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSession } from '../../src/api/sessions.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import type { EnvironmentConfig, MonitorConfig } from '../../src/config/index.js';
import { startEngine, type MeasurementEngine } from '../../src/measurement/engine.js';
import type { MeasurementEvent } from '../../src/measurement/messages.js';
import { API_KEY, testEnvironment, testRuntime } from '../support/harness.js';
import { useTestSimulator } from '../support/simulator-hooks.js';

const sim = useTestSimulator();
const GONE_KEY_VARIABLE = 'ISA_GONE_API_KEY';
const OTHER_KEY = 'another-key-fedcba9876543210';
let engine: MeasurementEngine | undefined;

afterEach(async () => {
  delete process.env[GONE_KEY_VARIABLE];
  await engine?.stop(1_000);
  engine = undefined;
});

/**
 * What a killed process leaves: a session of `gone` created through the API and listed in the
 * ledger (with its key read from `ISA_GONE_API_KEY`), owned by a process that no longer exists.
 */
async function leftBehind(): Promise<{ stateFile: string; token: string }> {
  const stateFile = join(await mkdtemp(join(tmpdir(), 'isa-removed-')), 'sessions.json');
  const gone = testEnvironment(`${sim.url}/env/gone`, {
    name: 'gone',
    apiKeySource: { kind: 'env', name: GONE_KEY_VARIABLE },
  });
  const { runtime, ledger } = await testRuntime(gone, stateFile);
  const created = await createSession(
    runtime.client,
    { street1: '1 Instant Way', zip: '80202', campaign_id: 'removed-test' },
    { timeoutMs: 2_000 },
  );
  const token = created.headers['session_token'] ?? '';
  await ledger.add('gone', token);
  await runtime.close();
  ledger.close();
  const dead = spawnSync('true').pid;
  const file = JSON.parse(await readFile(stateFile, 'utf8')) as { sessions: object[] };
  file.sessions = file.sessions.map((e) => ({ ...e, owner: { id: 'killed', pid: dead } }));
  await writeFile(stateFile, JSON.stringify(file));
  return { stateFile, token };
}

function monitorConfig(stateFile: string, environments: EnvironmentConfig[]): MonitorConfig {
  return {
    listen: { host: '127.0.0.1', port: 0 },
    stateFile,
    logLevel: 'info',
    shutdownTimeoutMs: 1_000,
    history: { windowMs: 86_400_000, runs: 100 },
    environments,
  };
}

/** Starts the engine with only `production` configured, keyed `productionKey`. */
async function restart(stateFile: string, productionKey: string, events: MeasurementEvent[]) {
  const production = testEnvironment(`${sim.url}/env/production`, { apiKey: productionKey });
  const config = monitorConfig(stateFile, [production]);
  engine = await startEngine({ config, userAgent: 'isa-monitor/test' }, (e) => events.push(e), {
    checks: CHECK_LIST,
  });
}

const logs = (events: MeasurementEvent[]) =>
  events.flatMap((e) => (e.type === 'log' ? [{ fields: e.fields, msg: e.msg }] : []));

describe('sessions of an environment no longer configured', () => {
  it('are closed at start with their recorded address and key source', async () => {
    process.env[GONE_KEY_VARIABLE] = API_KEY;
    const { stateFile, token } = await leftBehind();
    expect(sim.simulator.state.openSessions('gone').map((s) => s.token)).toEqual([token]);
    const events: MeasurementEvent[] = [];
    // production's key is one the API refuses: only the recorded source's key can close it.
    await restart(stateFile, OTHER_KEY, events);
    await expect
      .poll(() => sim.simulator.state.openSessions('gone'), { timeout: 5_000 })
      .toEqual([]);
    expect(sim.requests.some((r) => r.method === 'DELETE' && r.path.includes('/env/gone/'))).toBe(
      true,
    );
    const adopted = logs(events).find((l) => l.msg.includes('left open by a previous run'));
    expect(adopted?.fields).toMatchObject({ environment: 'gone', sessions: 1 });
    // The entry leaves the ledger once the close is confirmed (just after the API saw it).
    await expect.poll(() => readFile(stateFile, 'utf8'), { timeout: 5_000 }).not.toContain(token);
  });

  it("fall back to a configured environment's key when its fingerprint matches", async () => {
    process.env[GONE_KEY_VARIABLE] = API_KEY;
    const { stateFile } = await leftBehind();
    delete process.env[GONE_KEY_VARIABLE];
    await restart(stateFile, API_KEY, []);
    await expect
      .poll(() => sim.simulator.state.openSessions('gone'), { timeout: 5_000 })
      .toEqual([]);
  });

  it('are counted under their own name when no key is found, and the key is never logged', async () => {
    process.env[GONE_KEY_VARIABLE] = API_KEY;
    const { stateFile, token } = await leftBehind();
    delete process.env[GONE_KEY_VARIABLE];
    const events: MeasurementEvent[] = [];
    await restart(stateFile, OTHER_KEY, events);
    await expect
      .poll(() => logs(events).find((l) => l.msg.includes('no longer configured'))?.fields, {
        timeout: 5_000,
      })
      .toMatchObject({ environment: 'gone', sessions: 1 });
    const counts = events.flatMap((e) =>
      e.type === 'sessions_open' && e.environment === 'gone' ? [e.count] : [],
    );
    expect(counts.at(-1)).toBe(1);
    expect(sim.simulator.state.openSessions('gone').map((s) => s.token)).toEqual([token]);
    const adopted = logs(events).filter((l) => l.msg.includes('left open by a previous run'));
    expect(adopted.map((l) => l.fields)).toEqual([{ environment: 'gone', sessions: 1 }]);
    const text = JSON.stringify(events) + (await readFile(stateFile, 'utf8'));
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain(OTHER_KEY);
  });

  it('keep their count after a reload removed their environment, while the ledger holds them', async () => {
    const stateFile = join(await mkdtemp(join(tmpdir(), 'isa-removed-')), 'sessions.json');
    // Left by a killed process: a token the API does not know, so its close gets a 404 and it
    // stays listed.
    const dead = spawnSync('true').pid;
    const entry = { environment: 'gone', token: 'no-such-token', createdAt: 1 };
    const owner = { id: 'killed', pid: dead };
    await writeFile(
      stateFile,
      JSON.stringify({ version: 2, sessions: [{ ...entry, owner }], intents: [] }),
    );
    const production = testEnvironment(`${sim.url}/env/production`);
    const gone = testEnvironment(`${sim.url}/env/gone`, { name: 'gone' });
    const events: MeasurementEvent[] = [];
    engine = await startEngine(
      { config: monitorConfig(stateFile, [production, gone]), userAgent: 'isa-monitor/test' },
      (e) => events.push(e),
      { checks: CHECK_LIST },
    );
    const closeFailed = () => logs(events).some((l) => l.msg.includes('could not close'));
    await expect.poll(closeFailed, { timeout: 5_000 }).toBe(true);
    const before = events.length;
    engine.reload(monitorConfig(stateFile, [production]));
    expect(events.slice(before)).toContainEqual({
      type: 'sessions_open',
      environment: 'gone',
      count: 1,
    });
  });
});
