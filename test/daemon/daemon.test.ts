/**
 * The daemon as users run it: a child process with a config file, against a simulator on
 * loopback. Crash recovery, graceful shutdown, metrics and secrets.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { eventually, metricSum, startDaemonProcess, type DaemonProcess } from '../support/cli.js';
import { writeDaemonConfig, type DaemonConfigFile } from '../support/daemon-config.js';

const KEY = 'daemon-key-7d6c5b4a3f2e1d0c';
let sim: RunningSimulator;
const running: DaemonProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [KEY], qualifyDelayMs: 300 });
});
afterAll(() => sim.close());
afterEach(() => {
  for (const d of running.splice(0)) d.child.kill('SIGKILL');
  sim.faults.clear();
});

/** One environment against the simulator (or `baseUrl`), a lifecycle that must find service. */
function writeConfig(
  street1: string,
  extra = '',
  baseUrl = `${sim.url}/env/production`,
): Promise<DaemonConfigFile> {
  return writeDaemonConfig(baseUrl, { street1, extra, expect: 'available', requestBudget: 10 });
}

/**
 * An API that hands the caller's key back in every place a client might print: the error message,
 * the request_id operators are told to quote, a plain-text error page and response headers.
 */
async function startHostileApi(): Promise<{
  url: string;
  echoed: () => number;
  close: () => Promise<void>;
}> {
  let echoed = 0;
  const server = createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    const key = auth.replace(/^Bearer /, '');
    if (key.length > 0) echoed++;
    res.setHeader('x-echo-authorization', auth);
    res.setHeader('www-authenticate', `Bearer realm="${key}"`);
    req.resume();
    if (req.url?.endsWith('/ping') && echoed % 2 === 0) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`upstream refused Authorization: ${auth}`);
      return;
    }
    res.writeHead(req.method === 'POST' ? 400 : 500, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        message: `key ${key} is not welcome here`,
        request_status: 'error',
        request_id: key,
        errors: [{ field: 'authorization', message: auth }],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    echoed: () => echoed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function start(configPath: string): DaemonProcess {
  const daemon = startDaemonProcess(['--config', configPath], { ISA_PRODUCTION_API_KEY: KEY });
  running.push(daemon);
  return daemon;
}

describe('isa-monitor run', () => {
  it('serves metrics that move, status and readiness; exits 0 on SIGTERM with nothing left open', async () => {
    const { path, stateFile } = await writeConfig('2 Pending Ave');
    const daemon = start(path);
    const url = await daemon.url;
    await eventually(
      async () => (await fetch(`${url}/readyz`)).status === 200,
      10_000,
      'readiness',
    );
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    await eventually(
      async () => (await metricSum(url, /^isa_ping_attempts_total\{.*result="ok"/)) >= 2,
      10_000,
      'two ok pings',
    );
    await eventually(
      async () => (await metricSum(url, /^isa_lifecycle_runs_total\{.*result="success"/)) >= 1,
      15_000,
      'a successful lifecycle run',
    );
    const status = (await (await fetch(`${url}/api/status`)).json()) as {
      environments: Record<string, Record<string, { last: { outcome: string } | null }>>;
    };
    expect(status.environments['production']?.['ping']?.last?.outcome).toBe('pass');

    daemon.child.kill('SIGTERM');
    const exit = await daemon.exit;
    expect(exit.code).toBe(0);
    expect(daemon.output()).toContain('"msg":"stopped"');
    expect(sim.state.openSessions()).toEqual([]);
    const ledger = JSON.parse(await readFile(stateFile, 'utf8')) as { sessions: unknown[] };
    expect(ledger.sessions).toEqual([]);
  });

  it('never prints the key, even when a hostile API echoes it in bodies, headers and request ids', async () => {
    const hostile = await startHostileApi();
    try {
      const { path } = await writeConfig('2 Pending Ave', '', `${hostile.url}/env/production`);
      const daemon = startDaemonProcess(['--config', path, '--log-level', 'debug'], {
        ISA_PRODUCTION_API_KEY: KEY,
      });
      running.push(daemon);
      const url = await daemon.url;
      await eventually(
        async () =>
          (await metricSum(url, /^isa_ping_attempts_total\{.*result="server_error"/)) >= 2 &&
          (await metricSum(url, /^isa_lifecycle_runs_total\{.*result="create_failed"/)) >= 1,
        15_000,
        'failed pings and a failed lifecycle run against the hostile API',
      );
      // The API did get the key, and said it back in every way it could.
      expect(hostile.echoed()).toBeGreaterThanOrEqual(3);
      const metrics = await (await fetch(`${url}/metrics`)).text();
      const status = await (await fetch(`${url}/api/status`)).text();
      daemon.child.kill('SIGTERM');
      expect((await daemon.exit).code).toBe(0);
      const output = daemon.output();
      // A code path did try to print what the API sent back: it arrives redacted.
      expect(output).toMatch(/\[redacted\]/i);
      for (const [where, text] of [
        ['logs', output],
        ['metrics', metrics],
        ['status', status],
      ] as const) {
        expect(text, where).not.toContain(KEY);
      }
    } finally {
      await hostile.close();
    }
  });

  it('schedules the analytics check, which follows the lifecycle sessions into analytics', async () => {
    // A campaign of the user's own: analytics compares each session with the campaign it was
    // created with, so a healthy API fails no campaign check.
    // At a 3 s interval up to 21 runs share a minute: two analytics requests each fit the API limit.
    const { path } = await writeDaemonConfig(`${sim.url}/env/production`, {
      street1: '1 Instant Way',
      expect: 'available',
      requestBudget: 10,
      lifecycle: { campaign_id: 'acme-synthetic' },
      extra: `    analytics: { enabled: true, interval: 3s, timeout: 2s, request_timeout: 1s, max_pages: 1, max_lookups: 1 }
`,
    });
    const daemon = start(path);
    const url = await daemon.url;
    await eventually(
      async () => (await metricSum(url, /^isa_analytics_ingest_lag_seconds_count\{/)) >= 1,
      20_000,
      'an ingest lag observed',
    );
    expect(await metricSum(url, /^isa_analytics_sync_pages_total\{/)).toBeGreaterThanOrEqual(1);
    const campaignChecks = (result: string) =>
      metricSum(
        url,
        new RegExp(
          `^isa_contract_checks_total\\{.*check="analytics_campaign_id".*result="${result}"`,
        ),
      );
    expect(await campaignChecks('pass')).toBeGreaterThanOrEqual(1);
    expect(await campaignChecks('fail')).toBe(0);
    expect(await metricSum(url, /^isa_analytics_runs_total\{.*result="campaign_mismatch"/)).toBe(0);

    // A real mismatch: the API reports another campaign than the sessions were created with.
    sim.faults.add({
      endpoint: 'analytics',
      fault: { kind: 'analytics_campaign', campaignId: 'isa-monitor-synthetic' },
    });
    await eventually(
      async () => (await campaignChecks('fail')) >= 1,
      20_000,
      'a campaign_id mismatch counted',
    );
    expect(
      await metricSum(url, /^isa_analytics_runs_total\{.*result="campaign_mismatch"/),
    ).toBeGreaterThanOrEqual(1);
    daemon.child.kill('SIGTERM');
    expect((await daemon.exit).code).toBe(0);
  });

  it('closes the session of an interrupted run on SIGTERM and goes unready first', async () => {
    const { path } = await writeConfig('6 Forever Pending Ct');
    const daemon = start(path);
    const url = await daemon.url;
    await eventually(
      () => sim.state.openSessions().length > 0,
      15_000,
      'an open synthetic session',
    );
    daemon.child.kill('SIGTERM');
    await eventually(
      async () => {
        try {
          return (await fetch(`${url}/readyz`)).status === 503;
        } catch {
          return true; // already closed: also not ready
        }
      },
      5_000,
      'readiness to drop',
    );
    const exit = await daemon.exit;
    expect(exit.code).toBe(0);
    expect(sim.state.openSessions()).toEqual([]);
  });

  it('closes sessions a killed process left open, at the next start', async () => {
    const { path, stateFile } = await writeConfig('6 Forever Pending Ct');
    const first = start(path);
    await first.url;
    const open = await eventually(
      () => sim.state.openSessions()[0],
      15_000,
      'an open synthetic session',
    );
    await eventually(
      // The ledger file appears with the first write, just after the session is created.
      async () => (await readFile(stateFile, 'utf8').catch(() => '')).includes(open.token),
      5_000,
      'the token in the ledger',
    );
    first.child.kill('SIGKILL');
    await first.exit;
    expect(sim.state.sessions().find((s) => s.token === open.token)?.status).toBe('open');

    const second = start(path);
    await second.url;
    await eventually(
      () => sim.state.sessions().find((s) => s.token === open.token)?.status === 'closed',
      10_000,
      'the leftover session to be closed',
    );
    expect(second.output()).toContain('closing synthetic sessions left open by a previous run');
    second.child.kill('SIGTERM');
    expect((await second.exit).code).toBe(0);
    expect(sim.state.openSessions()).toEqual([]);
  });

  it('exits 2 with the problems on an invalid config', async () => {
    const { path } = await writeConfig('2 Pending Ave', 'bogus_key: 1\n');
    const daemon = startDaemonProcess(['--config', path], {});
    const exit = await daemon.exit;
    expect(exit.code).toBe(2);
    expect(daemon.output()).toContain('bogus_key');
    expect(daemon.output()).toContain('ISA_PRODUCTION_API_KEY');
  });
});
