/**
 * The daemon in every state it used to get stuck in, as a real process:
 * - SIGTERM in every phase ends it within 15 s (the promise of docs/cli.md); the slowest took
 *   107 s, with the start-up sweep waiting out a Retry-After (finding 4 of the "close every
 *   session" issue);
 * - the start-up sweep never blocks readiness or pings (finding 4);
 * - a huge Retry-After neither overflows a timer nor stalls shutdown (finding 3);
 * - a SIGKILL during a create is reported at the next start (finding 2);
 * - a state directory that becomes unwritable is logged once, exported, skips lifecycle runs and
 *   keeps pings going; fixed, it is noticed (finding 6; finding 6 of the "share one ledger" issue).
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import type { FaultRule } from '../../src/simulator/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { UNRECOVERABLE_MESSAGE } from '../../src/sessions/unrecoverable.js';
import { eventually, metricSum, startDaemonProcess, type DaemonProcess } from '../support/cli.js';
import { writeDaemonConfig } from '../support/daemon-config.js';
import { startFuzzProxy, type FuzzProxy } from './proxy.js';
import { createSession } from '../../src/api/sessions.js';

const KEY = 'daemon-states-key-6e5d4c3b2a19';
const ENV = { ISA_PRODUCTION_API_KEY: KEY };
const SIGTERM_LIMIT_MS = 15_000;
let sim: RunningSimulator;
let proxy: FuzzProxy;
const running: DaemonProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [KEY], qualifyDelayMs: 200 });
  proxy = await startFuzzProxy(sim.url);
});
afterAll(async () => {
  await proxy.close();
  await sim.close();
});
afterEach(() => {
  for (const d of running.splice(0)) d.child.kill('SIGKILL');
  sim.faults.clear();
});

function start(path: string): DaemonProcess {
  const daemon = startDaemonProcess(['--config', path], ENV);
  running.push(daemon);
  return daemon;
}

/** SIGTERM, then the time to exit in ms and the exit code. */
async function terminate(daemon: DaemonProcess): Promise<{ ms: number; code: number | null }> {
  const sent = performance.now();
  daemon.child.kill('SIGTERM');
  const exit = await daemon.exit;
  return { ms: performance.now() - sent, code: exit.code };
}

/** An open session on the simulator, made with the API directly. */
async function openSession(): Promise<string> {
  const client = new ApiClient({
    baseUrl: `${sim.url}/env/production`,
    apiKey: KEY,
    userAgent: 't',
  });
  const created = await createSession(
    client,
    { street1: '1 Instant Way', zip: '80202', campaign_id: 'leftover' },
    { timeoutMs: 5_000 },
  );
  await client.close();
  return created.headers['session_token'] ?? '';
}

describe('SIGTERM in every phase ends the daemon within 15 s', () => {
  const phases: Array<{ name: string; street1?: string; faults: FaultRule[]; waitFor: string }> = [
    {
      name: 'a create that hangs',
      faults: [{ endpoint: 'create_session', fault: { kind: 'hang' } }],
      waitFor: 'POST',
    },
    {
      name: 'a poll of a pending session',
      street1: '6 Forever Pending Ct',
      faults: [],
      waitFor: 'GET',
    },
    {
      name: 'a close that hangs',
      faults: [{ endpoint: 'close_session', fault: { kind: 'hang' } }],
      waitFor: 'DELETE',
    },
    {
      name: 'a create answered late, in its grace period',
      faults: [{ endpoint: 'create_session', fault: { kind: 'latency', ms: 3_000 } }],
      waitFor: 'POST',
    },
  ];
  it.each(phases)('$name', async ({ street1, faults, waitFor }) => {
    for (const rule of faults) sim.faults.add(rule);
    const config = await writeDaemonConfig(`${proxy.url}/env/production`, {
      ...(street1 ? { street1 } : {}),
      lifecycle: {
        interval: '3s',
        timeout: '2500ms',
        request_timeout: '1s',
        poll_interval: '200ms',
        poll_timeout: '2s',
      },
    });
    const daemon = start(config.path);
    await daemon.url;
    const since = performance.now();
    await eventually(
      () =>
        proxy.arrivals.some(
          (a) => a.method === waitFor && a.at > since && a.path.includes('/sessions'),
        ),
      10_000,
      `a ${waitFor} in flight`,
    );
    const { ms, code } = await terminate(daemon);
    expect(ms).toBeLessThan(SIGTERM_LIMIT_MS);
    expect(code).toBe(0);
  });
});

describe('start-up', () => {
  it('does not wait for the leftover sweep when its close meets 429 with Retry-After: 60', async () => {
    const token = await openSession();
    const config = await writeDaemonConfig(`${sim.url}/env/production`);
    await mkdir(dirname(config.stateFile), { recursive: true });
    // A leftover of a process that is gone (a version-1 file has no owners).
    await writeFile(
      config.stateFile,
      JSON.stringify({
        version: 1,
        sessions: [{ environment: 'production', token, createdAt: 1 }],
      }),
    );
    sim.faults.add({
      endpoint: 'close_session',
      fault: { kind: 'status', status: 429, retryAfterSeconds: 60 },
    });
    const started = performance.now();
    const daemon = start(config.path);
    const url = await daemon.url;
    await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, 10_000, 'ready');
    // The ping schedule runs: pings, or (once the sweep's 429 closed the gate for the whole
    // environment, as Retry-After asks) pings skipped as rate_limit_backoff.
    await eventually(
      async () =>
        (await metricSum(url, /^isa_ping_attempts_total\{/)) +
          (await metricSum(
            url,
            /^isa_checks_skipped_total\{.*check="ping".*reason="rate_limit_backoff"/,
          )) >
        0,
      10_000,
      'the ping schedule running while the sweep waits',
    );
    expect(performance.now() - started).toBeLessThan(20_000);
    const { ms, code } = await terminate(daemon);
    expect(ms).toBeLessThan(SIGTERM_LIMIT_MS);
    expect(code).toBe(0);
    // Still open on the API, so still listed for the next start.
    expect(await readFile(config.stateFile, 'utf8')).toContain(token);
  });

  it('clamps a huge Retry-After without a timer overflow, and still stops at once', async () => {
    sim.faults.add({
      endpoint: 'ping',
      fault: { kind: 'status', status: 429, retryAfterSeconds: 99_999_999_999 },
    });
    const config = await writeDaemonConfig(`${sim.url}/env/production`);
    const daemon = start(config.path);
    await daemon.url;
    await eventually(
      () => daemon.output().includes('Retry-After clamped to its maximum'),
      10_000,
      'the clamp in the log',
    );
    const { ms, code } = await terminate(daemon);
    expect(daemon.output()).not.toContain('TimeoutOverflowWarning');
    expect(ms).toBeLessThan(SIGTERM_LIMIT_MS);
    expect(code).toBe(0);
  });

  it('reports a session whose create a SIGKILL interrupted, at the next start', async () => {
    sim.faults.add({ endpoint: 'create_session', fault: { kind: 'latency', ms: 1_500 } });
    const config = await writeDaemonConfig(`${proxy.url}/env/production`, {
      lifecycle: { interval: '3s', timeout: '2500ms', request_timeout: '2s' },
    });
    const first = start(config.path);
    await first.url;
    const since = performance.now();
    await eventually(
      () => proxy.arrivals.some((a) => a.method === 'POST' && a.at > since),
      10_000,
      'a create in flight',
    );
    await eventually(
      async () => (await readFile(config.stateFile, 'utf8')).includes('"intents": [\n    {'),
      5_000,
      'the intent on disk',
    );
    first.child.kill('SIGKILL');
    await first.exit;
    sim.faults.clear();
    const second = start(config.path);
    const url = await second.url;
    await eventually(
      async () => (await metricSum(url, /^isa_synthetic_sessions_unrecoverable_total\{/)) === 1,
      10_000,
      'the unrecoverable counter',
    );
    expect(second.output()).toContain(UNRECOVERABLE_MESSAGE);
    expect(second.output()).toContain('"campaignId":"isa-monitor-synthetic"');
    expect(second.output()).toContain('"correlationId":"');
    await terminate(second);
  });
});

describe('a state directory that becomes unwritable', () => {
  it('is logged once, exported, skips lifecycle runs, keeps pings, and is noticed when fixed', async () => {
    const config = await writeDaemonConfig(`${sim.url}/env/production`, {
      street1: '1 Instant Way',
      lifecycle: { interval: '2s', timeout: '1500ms' },
    });
    const daemon = start(config.path);
    const url = await daemon.url;
    await eventually(
      async () => (await metricSum(url, /^isa_lifecycle_runs_total\{.*result="success"/)) > 0,
      15_000,
      'a lifecycle run',
    );
    // The state directory becomes a file: every write fails, even for root.
    const dir = dirname(config.stateFile);
    await rename(dir, `${dir}.away`);
    await writeFile(dir, '');
    await eventually(
      async () => (await metricSum(url, /^isa_session_ledger_writable /)) === 0,
      15_000,
      'the ledger reported unwritable',
    );
    const pings = await metricSum(url, /^isa_ping_attempts_total\{/);
    await eventually(
      async () =>
        (await metricSum(url, /^isa_checks_skipped_total\{.*reason="ledger_unwritable"/)) >= 2 &&
        (await metricSum(url, /^isa_ping_attempts_total\{/)) > pings,
      15_000,
      'lifecycle runs skipped while pings go on',
    );
    expect(daemon.output().split('cannot write the session ledger').length - 1).toBe(1);
    await rm(dir);
    await rename(`${dir}.away`, dir);
    await eventually(
      async () => (await metricSum(url, /^isa_session_ledger_writable /)) === 1,
      15_000,
      'the ledger writable again',
    );
    expect(daemon.output().split('the session ledger is writable again').length - 1).toBe(1);
    const { code } = await terminate(daemon);
    expect(code).toBe(0);
  });

  it('at start-up: logged, exported, and the daemon still gets ready and pings', async () => {
    const config = await writeDaemonConfig(`${sim.url}/env/production`);
    await writeFile(dirname(config.stateFile), '');
    const daemon = start(config.path);
    const url = await daemon.url;
    await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, 10_000, 'ready');
    expect(await metricSum(url, /^isa_session_ledger_writable /)).toBe(0);
    expect(daemon.output()).toContain('cannot write the session ledger');
    await eventually(
      async () => (await metricSum(url, /^isa_ping_attempts_total\{/)) > 0,
      10_000,
      'a ping',
    );
    await terminate(daemon);
  });
});
