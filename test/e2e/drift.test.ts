/**
 * End to end, with the real tools: a change of the API in the sandbox alone → isa-monitor's
 * contract drift → Prometheus → Alertmanager → a ticket, never a page; `isa-monitor drift accept`
 * then resolves it (docs/drift.md, docs/alerts.md `IsaApiContractDrift`). The learning hour is
 * the daemon's own, in real time: the test lets a first daemon learn the baselines, settles them
 * in the file as that hour would, and watches a second daemon on the stack's compressed clock.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { checksOff } from '../support/checks-off.js';
import { settleBaselines } from '../support/drift-baselines.js';
import { eventually, runCli, startDaemonProcess, type DaemonProcess } from '../support/cli.js';
import {
  notificationsMatching,
  startMonitoringStack,
  writeText,
  type MonitoringStack,
} from './stack.js';

/** Real seconds per compressed second: the alert's 15 minutes pass in 30 s. */
const FACTOR = 30;
const REAL_MINUTE_MS = 60_000 / FACTOR;
/** Process start-up, scrapes and HTTP hops do not shrink with the clock. */
const SLACK_MS = 15_000;
const KEYS = { production: 'e2e-drift-production-key-5e6f', sandbox: 'e2e-drift-sandbox-key-7a8b' };
const ENV = { ISA_PRODUCTION_API_KEY: KEYS.production, ISA_SANDBOX_API_KEY: KEYS.sandbox };

let dir: string;
let configPath: string;
let stateFile: string;
let sim: RunningSimulator;
let stack: MonitoringStack | undefined;
const daemons: DaemonProcess[] = [];
const report: string[] = [];

/** Pings and provider lists every second, in both environments; the other checks off. */
async function writeConfig(): Promise<void> {
  configPath = await writeText(
    join(dir, 'isa-monitor.yaml'),
    stringify({
      listen: { host: '127.0.0.1', port: 0 },
      state_file: stateFile,
      shutdown_timeout: '3s',
      environments: (['production', 'sandbox'] as const).map((name) => ({
        name,
        base_url: `${sim.url}/env/${name}`,
        api_key_env: `ISA_${name.toUpperCase()}_API_KEY`,
        request_budget_per_second: 10,
        ping: { interval: '1s', timeout: '500ms' },
        providers: { interval: '1s', timeout: '900ms' },
        ...checksOff(['ping', 'providers']),
      })),
    }),
  );
}

async function startDaemon(): Promise<{ daemon: DaemonProcess; url: string }> {
  const daemon = startDaemonProcess(['--config', configPath], ENV);
  daemons.push(daemon);
  return { daemon, url: await daemon.url };
}

async function stopDaemon(daemon: DaemonProcess): Promise<void> {
  daemon.child.kill('SIGTERM');
  expect((await daemon.exit).code).toBe(0);
}

/** The operations whose answers the daemon's drift document has, by environment. */
async function learning(url: string): Promise<Record<string, string[]>> {
  const status = (await (await fetch(`${url}/api/status`)).json()) as {
    contract_drift: {
      environments: Record<string, { operations: Record<string, unknown> }>;
    } | null;
  };
  return Object.fromEntries(
    Object.entries(status.contract_drift?.environments ?? {}).map(([name, { operations }]) => [
      name,
      Object.keys(operations).sort(),
    ]),
  );
}

function tickets(environment: string, status: 'firing' | 'resolved', since: number) {
  return notificationsMatching(stack!.receiver, {
    alertname: 'IsaApiContractDrift',
    environment,
    status,
    since,
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'isa-e2e-drift-'));
  stateFile = join(dir, 'sessions.json');
  sim = await startSimulator({ apiKeys: [KEYS.production, KEYS.sandbox], port: 0 });
  await writeConfig();
  // The first daemon learns the healthy answers of both environments.
  const first = await startDaemon();
  await eventually(
    async () => {
      const seen = await learning(first.url);
      const both = ['production', 'sandbox'].every((name) =>
        ['ping', 'service_providers'].every((op) => seen[name]?.includes(op)),
      );
      return both ? true : undefined;
    },
    30_000,
    'both environments learning',
  );
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  await stopDaemon(first.daemon);
  expect(await settleBaselines(stateFile)).toBeGreaterThanOrEqual(4);
}, 90_000);

afterAll(async () => {
  for (const daemon of daemons) if (daemon.child.exitCode === null) daemon.child.kill('SIGTERM');
  await Promise.all(daemons.map((daemon) => daemon.exit));
  await stack?.stop();
  await sim?.close();
  if (report.length > 0)
    console.log(`\ncontract drift end to end (clock compressed ${FACTOR}x):\n${report.join('\n')}`);
});

describe('contract drift, end to end with real Prometheus and Alertmanager', () => {
  it('files a ticket for the sandbox alone, never pages, and resolves once accepted', async () => {
    // The sandbox's provider list gains a provider type the spec does not list: a warning.
    sim.faults.add({
      environment: 'sandbox',
      endpoint: 'service_providers',
      fault: { kind: 'drift', change: 'new_value', path: 'providers[].type', value: 'reseller' },
    });
    const second = await startDaemon();
    stack = await startMonitoringStack({
      dir,
      factor: FACTOR,
      targets: [{ host: new URL(second.url).host }],
    });
    const onset = performance.now();
    const [ticket] = await eventually(
      () => {
        const found = tickets('sandbox', 'firing', onset);
        return found.length > 0 ? found : undefined;
      },
      15 * REAL_MINUTE_MS + 2 * REAL_MINUTE_MS + SLACK_MS,
      'IsaApiContractDrift for the sandbox',
    );
    report.push(
      `  sandbox drift: ticket after ${((ticket!.at - onset) / REAL_MINUTE_MS).toFixed(1)} min`,
    );
    expect(ticket!.receiver).toBe('ticket');
    const alert = ticket!.alerts.find((a) => a.labels['alertname'] === 'IsaApiContractDrift');
    expect(alert?.labels).toMatchObject({
      environment: 'sandbox',
      operation: 'service_providers',
      severity: 'warning',
    });
    expect(alert?.annotations['runbook_url']).toMatch(/runbooks\.md#isaapicontractdrift$/);

    // Production's answers did not change, and nothing was ever a page.
    expect(tickets('production', 'firing', 0)).toEqual([]);
    expect(stack.receiver.notifications.filter((n) => n.receiver === 'pager')).toEqual([]);

    // A person accepts what the sandbox now answers; the daemon takes it without a restart.
    const accepted = performance.now();
    const run = await runCli(
      [
        'drift',
        'accept',
        '--config',
        configPath,
        '--environment',
        'sandbox',
        '--operation',
        'service_providers',
      ],
      { env: ENV },
    );
    expect(run.code, run.stderr).toBe(0);
    const resolved = await eventually(
      () => tickets('sandbox', 'resolved', accepted)[0],
      10 * REAL_MINUTE_MS + SLACK_MS,
      'the ticket to resolve after the accept',
    );
    report.push(
      `  accepted: resolved after ${((resolved.at - accepted) / REAL_MINUTE_MS).toFixed(1)} min`,
    );
    expect(stack.receiver.notifications.filter((n) => n.receiver === 'pager')).toEqual([]);
  }, 180_000);

  it('never let the API keys out of the daemons', () => {
    for (const daemon of daemons) {
      expect(daemon.output()).not.toContain(KEYS.production);
      expect(daemon.output()).not.toContain(KEYS.sandbox);
    }
  });
});
