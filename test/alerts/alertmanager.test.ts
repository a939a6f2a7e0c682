/**
 * deploy/alertmanager/alertmanager.yml: amtool accepts it, routes each kind of alert to the right
 * receiver, and a real Alertmanager applies the inhibitions (one cause, one page).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { REPO_ROOT } from '../../scripts/rules/gen-rule-tests.js';
import { requireTool, runTool } from './tools.js';

const CONFIG = join(REPO_ROOT, 'deploy/alertmanager/alertmanager.yml');

async function receiverFor(labels: Record<string, string>): Promise<string> {
  const args = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
  const result = await runTool('amtool', [
    'config',
    'routes',
    'test',
    `--config.file=${CONFIG}`,
    ...args,
  ]);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

describe('alertmanager.yml', () => {
  it('passes amtool check-config', async () => {
    const result = await runTool('amtool', ['check-config', CONFIG]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('SUCCESS');
  });

  it.each([
    [{ alertname: 'Watchdog', severity: 'none' }, 'heartbeat'],
    [{ alertname: 'IsaApiLatencyHigh', severity: 'critical', environment: 'production' }, 'pager'],
    [{ alertname: 'IsaApiLatencyHigh', severity: 'warning', environment: 'production' }, 'ticket'],
    [{ alertname: 'IsaApiDown', severity: 'warning', environment: 'sandbox' }, 'ticket'],
    [
      { alertname: 'IsaMonitorDown', severity: 'critical', job: 'isa-monitor', instance: 'x:9464' },
      'pager',
    ],
    [
      { alertname: 'IsaApiErrorBudgetBurn', severity: 'warning', environment: 'production' },
      'ticket',
    ],
    [{ alertname: 'SomethingElse' }, 'ticket'],
  ])('routes %o to %s', async (labels, receiver) => {
    expect(await receiverFor(labels)).toBe(receiver);
  });

  it('groups per alert and environment and sends the heartbeat every minute without resolves', async () => {
    const config = YAML.parse(await readFile(CONFIG, 'utf8')) as {
      route: { group_by: string[]; routes: Array<Record<string, unknown>> };
      receivers: Array<{
        name: string;
        webhook_configs: Array<{ url: string; send_resolved: boolean }>;
      }>;
    };
    expect(config.route.group_by).toEqual(['alertname', 'environment']);
    const heartbeatRoute = config.route.routes.find((r) => r['receiver'] === 'heartbeat');
    expect(heartbeatRoute).toMatchObject({ repeat_interval: '1m', group_interval: '1m' });
    const heartbeat = config.receivers.find((r) => r.name === 'heartbeat');
    expect(heartbeat?.webhook_configs.every((w) => w.send_resolved === false)).toBe(true);
    expect(config.receivers.map((r) => r.name).sort()).toEqual(['heartbeat', 'pager', 'ticket']);
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

interface ApiAlert {
  labels: Record<string, string>;
  status: { state: string; inhibitedBy: string[] };
}

describe('inhibitions in a real Alertmanager', () => {
  let dir: string;
  let child: ChildProcess | undefined;
  let base: string;
  let log = '';

  beforeAll(async () => {
    const binary = requireTool('prometheus-alertmanager');
    dir = await mkdtemp(join(tmpdir(), 'isa-alertmanager-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(
      binary,
      [
        `--config.file=${CONFIG}`,
        `--storage.path=${dir}`,
        `--web.listen-address=127.0.0.1:${port}`,
        // No gossip port: a single test instance.
        '--cluster.listen-address=',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        if ((await fetch(`${base}/-/ready`)).ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`Alertmanager did not start:\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function post(alerts: Array<Record<string, string>>): Promise<void> {
    const response = await fetch(`${base}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(alerts.map((labels) => ({ labels }))),
    });
    expect(response.status, await response.text()).toBe(200);
  }

  /**
   * Active or suppressed per alert, keyed by `key` (by default alertname/environment/severity),
   * among the alerts `filter` keeps, once the inhibitor has settled on `expected`.
   */
  async function states(
    expected: Record<string, string>,
    key: (labels: Record<string, string>) => string = (l) =>
      `${l['alertname']}/${l['environment'] ?? '-'}/${l['severity']}`,
    filter: (labels: Record<string, string>) => boolean = () => true,
  ): Promise<Record<string, string>> {
    const deadline = Date.now() + 10_000;
    let seen: Record<string, string> = {};
    do {
      const alerts = (await (await fetch(`${base}/api/v2/alerts`)).json()) as ApiAlert[];
      seen = Object.fromEntries(
        alerts.filter((a) => filter(a.labels)).map((a) => [key(a.labels), a.status.state]),
      );
      if (
        JSON.stringify(Object.entries(seen).sort()) ===
        JSON.stringify(Object.entries(expected).sort())
      )
        break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < deadline);
    return seen;
  }

  it('lets the cause through and mutes its symptoms, per environment', async () => {
    const alert = (alertname: string, environment: string, severity: string) => ({
      alertname,
      environment,
      severity,
    });
    await post([
      // production: the API is down; everything it explains is muted, the key problem is not.
      alert('IsaApiDown', 'production', 'critical'),
      alert('IsaApiLatencyHigh', 'production', 'critical'),
      alert('IsaLifecycleFailing', 'production', 'critical'),
      alert('IsaApiErrorBudgetBurn', 'production', 'warning'),
      alert('IsaQualifyTimeoutsRising', 'production', 'warning'),
      alert('IsaClosedSessionNotGone', 'production', 'warning'),
      alert('IsaSyntheticSessionsLeaking', 'production', 'warning'),
      alert('IsaCredentialsRejected', 'production', 'critical'),
      // sandbox: rate limiting explains the lifecycle failures; production's outage explains nothing here.
      alert('IsaApiRateLimited', 'sandbox', 'warning'),
      alert('IsaLifecycleFailing', 'sandbox', 'warning'),
      alert('IsaApiLatencyHigh', 'sandbox', 'warning'),
      // staging: the page makes the ticket of the same alert redundant; a rejected key explains leaks.
      alert('IsaApiLatencyHigh', 'staging', 'critical'),
      alert('IsaApiLatencyHigh', 'staging', 'warning'),
      alert('IsaCredentialsRejected', 'staging', 'warning'),
      alert('IsaSyntheticSessionsLeaking', 'staging', 'warning'),
      { alertname: 'Watchdog', severity: 'none' },
    ]);
    const expected = {
      'IsaApiDown/production/critical': 'active',
      'IsaApiLatencyHigh/production/critical': 'suppressed',
      'IsaLifecycleFailing/production/critical': 'suppressed',
      'IsaApiErrorBudgetBurn/production/warning': 'suppressed',
      'IsaQualifyTimeoutsRising/production/warning': 'suppressed',
      'IsaClosedSessionNotGone/production/warning': 'suppressed',
      'IsaSyntheticSessionsLeaking/production/warning': 'suppressed',
      'IsaCredentialsRejected/production/critical': 'active',
      'IsaApiRateLimited/sandbox/warning': 'active',
      'IsaLifecycleFailing/sandbox/warning': 'suppressed',
      'IsaApiLatencyHigh/sandbox/warning': 'active',
      'IsaApiLatencyHigh/staging/critical': 'active',
      'IsaApiLatencyHigh/staging/warning': 'suppressed',
      'IsaCredentialsRejected/staging/warning': 'active',
      'IsaSyntheticSessionsLeaking/staging/warning': 'suppressed',
      'Watchdog/-/none': 'active',
    };
    expect(await states(expected)).toEqual(expected);
  });

  it("mutes a down monitor's own alerts, not the page the other locations vote for", async () => {
    const dr = (alertname: string, severity: string, instance?: string) => ({
      alertname,
      severity,
      environment: 'dr',
      ...(instance !== undefined && { job: 'isa-monitor', instance }),
    });
    await post([
      // The environment's page (no instance) and one ticket per location.
      dr('IsaApiLatencyHigh', 'critical'),
      dr('IsaCredentialsRejected', 'warning', '10.0.0.1:9464'),
      dr('IsaCredentialsRejected', 'warning', '10.0.0.2:9464'),
      {
        alertname: 'IsaMonitorDown',
        severity: 'critical',
        job: 'isa-monitor',
        instance: '10.0.0.1:9464',
      },
    ]);
    const expected = {
      'IsaApiLatencyHigh/-': 'active',
      'IsaCredentialsRejected/10.0.0.1:9464': 'suppressed',
      'IsaCredentialsRejected/10.0.0.2:9464': 'active',
      'IsaMonitorDown/10.0.0.1:9464': 'active',
    };
    const inScope = (l: Record<string, string>) =>
      l['environment'] === 'dr' || l['alertname'] === 'IsaMonitorDown';
    const byInstance = (l: Record<string, string>) => `${l['alertname']}/${l['instance'] ?? '-'}`;
    expect(await states(expected, byInstance, inScope)).toEqual(expected);
  });

  it('mutes only the down location when locations share an instance', async () => {
    const shared = (alertname: string, severity: string, location: string, instance: string) => ({
      alertname,
      severity,
      environment: 'shared',
      job: 'isa-monitor',
      instance,
      location,
    });
    const down = (instance: string, location?: string) => ({
      alertname: 'IsaMonitorDown',
      severity: 'critical',
      job: 'isa-monitor',
      instance,
      ...(location !== undefined && { location }),
    });
    await post([
      // Two agents that each scrape isa-monitor:9464: west's monitor is down, east's is not.
      shared('IsaCredentialsRejected', 'warning', 'east', 'isa-monitor:9464'),
      shared('IsaCredentialsRejected', 'warning', 'west', 'isa-monitor:9464'),
      down('isa-monitor:9464', 'west'),
      // The monitor's own `location` key: its alerts carry it, its `up` (and so its
      // IsaMonitorDown) does not; the instance alone names it.
      shared('IsaCredentialsRejected', 'warning', 'north', '10.0.0.3:9464'),
      down('10.0.0.3:9464'),
    ]);
    const expected = {
      'IsaCredentialsRejected/isa-monitor:9464/east': 'active',
      'IsaCredentialsRejected/isa-monitor:9464/west': 'suppressed',
      'IsaCredentialsRejected/10.0.0.3:9464/north': 'suppressed',
    };
    const inScope = (l: Record<string, string>) => l['environment'] === 'shared';
    const byLocation = (l: Record<string, string>) =>
      `${l['alertname']}/${l['instance']}/${l['location']}`;
    expect(await states(expected, byLocation, inScope)).toEqual(expected);
  });

  it('sends one notification per alert and environment, whatever the locations', async () => {
    const located = (alertname: string, severity: string, location: string, instance: string) => ({
      alertname,
      severity,
      environment: 'eu',
      location,
      job: 'isa-monitor',
      instance,
    });
    await post([
      located('IsaApiErrorBudgetBurn', 'warning', 'east', '10.0.1.1:9464'),
      located('IsaApiErrorBudgetBurn', 'warning', 'west', '10.0.1.2:9464'),
      located('IsaApiRateLimited', 'warning', 'east', '10.0.1.1:9464'),
    ]);
    interface Group {
      labels: Record<string, string>;
      receiver: { name: string };
      alerts: ApiAlert[];
    }
    const deadline = Date.now() + 10_000;
    let groups: Group[] = [];
    do {
      groups = ((await (await fetch(`${base}/api/v2/alerts/groups`)).json()) as Group[]).filter(
        (g) => g.labels['environment'] === 'eu',
      );
      if (groups.reduce((n, g) => n + g.alerts.length, 0) === 3) break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < deadline);
    const summary = groups
      .map((g) => `${g.receiver.name} ${JSON.stringify(g.labels)} ${g.alerts.length}`)
      .sort();
    expect(summary).toEqual([
      'ticket {"alertname":"IsaApiErrorBudgetBurn","environment":"eu"} 2',
      'ticket {"alertname":"IsaApiRateLimited","environment":"eu"} 1',
    ]);
  });
});
