/**
 * End to end, with the real tools: simulator fault → isa-monitor → Prometheus → Alertmanager →
 * a webhook that receives the page. Runs on a compressed clock: the daemon's intervals, the
 * rules' windows, `for:` and `keep_firing_for`, and Alertmanager's timers are all divided by one
 * factor (the rules through scripts/rules/scale-rules.ts, from a copy of the real rules file).
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseDuration } from '../../scripts/rules/durations.js';
import { scaleRules } from '../../scripts/rules/scale-rules.js';
import { allDashboardQueries, interpolate } from '../../dashboards/src/queries.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { eventually, startDaemonProcess, type DaemonProcess } from '../support/cli.js';
import {
  freePort,
  requireTool,
  startProcess,
  startWebhookReceiver,
  waitForHttp,
  writeText,
  type ManagedProcess,
  type Notification,
  type WebhookReceiver,
} from './stack.js';

/** Real seconds per compressed second: one real minute passes in 2 s. */
const FACTOR = 30;
const REAL_MINUTE_MS = 60_000 / FACTOR;
const scaled = (realMs: number): number => Math.max(1, Math.round(realMs / FACTOR));
/** Injected latency: just past the 1 s critical threshold. */
const SLOW_PING_MS = 1_100;
/**
 * What does not shrink with the clock: each slow ping still takes SLOW_PING_MS before it is
 * recorded (0.55 s of a 2 s interval, where in real time it is 1 s of 60 s), plus process
 * scheduling and HTTP hops. Bounds get this much on top of their scaled value.
 */
const SLACK_MS = SLOW_PING_MS + 2_000;

const PRODUCTION_KEY = 'e2e-production-key-0f1e2d3c';
const SANDBOX_KEY = 'e2e-sandbox-key-4b5a6978';

let dir: string;
let sim: RunningSimulator;
let receiver: WebhookReceiver;
let daemon: DaemonProcess;
let prometheusUrl: string;
const processes: ManagedProcess[] = [];
const report: string[] = [];

async function query(
  expr: string,
): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const url = `${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`;
  const body = (await (await fetch(url)).json()) as {
    status: string;
    error?: string;
    data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
  };
  if (body.status !== 'success') throw new Error(`query failed: ${expr}: ${body.error}`);
  return body.data.result;
}

function pages(alertname: string, status: 'firing' | 'resolved', since = 0): Notification[] {
  return receiver.notifications.filter(
    (n) =>
      n.at >= since &&
      n.alerts.some((a) => a.labels['alertname'] === alertname && a.status === status),
  );
}

function firstPage(
  alertname: string,
  environment: string,
  severity: string,
  status: 'firing' | 'resolved',
  since: number,
) {
  return receiver.notifications.find(
    (n) =>
      n.at >= since &&
      n.alerts.some(
        (a) =>
          a.status === status &&
          a.labels['alertname'] === alertname &&
          a.labels['environment'] === environment &&
          a.labels['severity'] === severity,
      ),
  );
}

function realMinutes(ms: number): string {
  return ((ms * FACTOR) / 60_000).toFixed(1);
}

beforeAll(async () => {
  const prometheus = requireTool('prometheus');
  const alertmanager = requireTool('prometheus-alertmanager');
  requireTool('promtool');
  dir = await mkdtemp(join(tmpdir(), 'isa-e2e-'));

  sim = await startSimulator({ apiKeys: [PRODUCTION_KEY, SANDBOX_KEY], qualifyDelayMs: 300 });
  receiver = await startWebhookReceiver();

  // The daemon: the contract's intervals, compressed.
  const configPath = await writeText(
    join(dir, 'isa-monitor.yaml'),
    stringify({
      listen: { host: '127.0.0.1', port: 0 },
      state_file: join(dir, 'sessions.json'),
      shutdown_timeout: '3s',
      environments: ['production', 'sandbox'].map((name) => ({
        name,
        base_url: `${sim.url}/env/${name}`,
        api_key_env: `ISA_${name.toUpperCase()}_API_KEY`,
        request_budget_per_second: 10,
        ping: { interval: `${scaled(60_000)}ms`, timeout: '1500ms' },
        lifecycle: {
          interval: `${scaled(300_000)}ms`,
          timeout: `${scaled(240_000)}ms`,
          poll_interval: '100ms',
          poll_timeout: `${scaled(90_000)}ms`,
          addresses: [{ street1: '2 Pending Ave', zip: '80202', expect: 'available' }],
        },
        // Every dashboard panel needs data. A 4 s interval lets 16 runs share a minute: three
        // analytics requests each stay within the API's 60 a minute.
        analytics: {
          enabled: true,
          interval: '4s',
          timeout: '3s',
          request_timeout: '1s',
          max_pages: 2,
          max_lookups: 1,
        },
        providers: { interval: `${scaled(900_000)}ms`, timeout: '10s' },
        coverage: { interval: `${scaled(900_000)}ms`, timeout: '10s', min_providers: 1 },
      })),
    }),
  );
  daemon = startDaemonProcess(['--config', configPath], {
    ISA_PRODUCTION_API_KEY: PRODUCTION_KEY,
    ISA_SANDBOX_API_KEY: SANDBOX_KEY,
  });
  const daemonUrl = await daemon.url;

  // Rules: a scaled copy of the real file, checked by promtool like the original.
  const rulesPath = await writeText(
    join(dir, 'rules.yaml'),
    scaleRules(await readFile('alerts/isa-monitor.rules.yaml', 'utf8'), 1 / FACTOR),
  );
  execFileSync('promtool', ['check', 'rules', rulesPath], { stdio: 'pipe' });

  // Alertmanager: the shipped example, receivers pointed at the webhook, timers compressed.
  const amPort = await freePort();
  const am = parse(await readFile('deploy/alertmanager/alertmanager.yml', 'utf8')) as Record<
    string,
    unknown
  >;
  const amPath = await writeText(
    join(dir, 'alertmanager.yml'),
    stringify(retargetAlertmanager(am)),
  );
  processes.push(
    await startProcess(
      'alertmanager',
      alertmanager,
      [
        `--config.file=${amPath}`,
        `--storage.path=${join(dir, 'am')}`,
        `--web.listen-address=127.0.0.1:${amPort}`,
        '--cluster.listen-address=',
      ],
      dir,
    ),
  );

  // Prometheus: the shipped example, pointed at this daemon, these rules and this Alertmanager.
  const promPort = await freePort();
  prometheusUrl = `http://127.0.0.1:${promPort}`;
  const prom = parse(await readFile('deploy/prometheus/prometheus.yml', 'utf8')) as Record<
    string,
    unknown
  >;
  const promPath = await writeText(
    join(dir, 'prometheus.yml'),
    stringify(retargetPrometheus(prom, new URL(daemonUrl).host, rulesPath, `127.0.0.1:${amPort}`)),
  );
  processes.push(
    await startProcess(
      'prometheus',
      prometheus,
      [
        `--config.file=${promPath}`,
        `--storage.tsdb.path=${join(dir, 'prom')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        `--rules.alert.resend-delay=${scaled(60_000)}ms`,
      ],
      dir,
    ),
  );
  await waitForHttp(`http://127.0.0.1:${amPort}/-/ready`, 30_000);
  await waitForHttp(`${prometheusUrl}/-/ready`, 30_000);
  await eventually(
    async () => ((await query('up{job="isa-monitor"}'))[0]?.value[1] === '1' ? true : undefined),
    30_000,
    'Prometheus to scrape isa-monitor',
  );
}, 120_000);

afterAll(async () => {
  daemon?.child.kill('SIGTERM');
  await daemon?.exit;
  for (const p of processes.reverse()) await p.stop();
  await receiver?.close();
  await sim?.close();
  if (report.length > 0)
    console.log(`\nend-to-end (clock compressed ${FACTOR}x):\n${report.join('\n')}`);
});

/** Receivers → the test's webhook (same paths); group and repeat timers compressed. */
function retargetAlertmanager(config: Record<string, unknown>): Record<string, unknown> {
  const scaleTimers = (route: Record<string, unknown>): void => {
    for (const key of ['group_wait', 'group_interval', 'repeat_interval']) {
      if (typeof route[key] === 'string') route[key] = `${scaled(parseDuration(route[key]))}ms`;
    }
    for (const child of (route['routes'] as Array<Record<string, unknown>> | undefined) ?? [])
      scaleTimers(child);
  };
  scaleTimers(config['route'] as Record<string, unknown>);
  for (const receiverConfig of (config['receivers'] as Array<Record<string, unknown>>) ?? []) {
    for (const hook of (receiverConfig['webhook_configs'] as
      Array<Record<string, unknown>> | undefined) ?? []) {
      hook['url'] = `${receiver.url}/${receiverConfig['name'] as string}`;
    }
  }
  return config;
}

function retargetPrometheus(
  config: Record<string, unknown>,
  daemonHost: string,
  rulesPath: string,
  amHost: string,
): Record<string, unknown> {
  const global = (config['global'] ?? {}) as Record<string, unknown>;
  for (const key of ['scrape_interval', 'evaluation_interval', 'scrape_timeout']) {
    if (typeof global[key] === 'string') global[key] = `${scaled(parseDuration(global[key]))}ms`;
  }
  config['global'] = global;
  const jobs = config['scrape_configs'] as Array<Record<string, unknown>>;
  const job = jobs.find((j) => j['job_name'] === 'isa-monitor');
  if (!job) throw new Error('deploy/prometheus/prometheus.yml has no isa-monitor job');
  delete job['scrape_interval'];
  delete job['scrape_timeout'];
  job['static_configs'] = [{ targets: [daemonHost] }];
  config['scrape_configs'] = [job];
  config['rule_files'] = [rulesPath];
  config['alerting'] = { alertmanagers: [{ static_configs: [{ targets: [amHost] }] }] };
  return config;
}

describe('the page, end to end with real Prometheus and Alertmanager', () => {
  it('pages on sustained critical latency in production, not on a burst, and resolves after recovery', async () => {
    // Enough pings in the window for the minimum-samples guard.
    await eventually(
      async () => {
        const [row] = await query(
          'sum(increase(isa_ping_attempts_total{environment="production"}[20s]))',
        );
        return Number(row?.value[1] ?? 0) >= 8 ? true : undefined;
      },
      60_000,
      'eight pings in the window',
    );

    // A burst of four slow pings must never page.
    const burstStart = performance.now();
    sim.faults.add({
      environment: 'production',
      endpoint: 'ping',
      count: 4,
      fault: { kind: 'latency', ms: SLOW_PING_MS },
    });
    await eventually(
      () => (sim.faults.rules().length === 0 ? true : undefined),
      30_000,
      'the burst to pass',
    );
    await new Promise((r) => setTimeout(r, 12 * REAL_MINUTE_MS + SLACK_MS));
    expect(pages('IsaApiLatencyHigh', 'firing', burstStart)).toEqual([]);
    report.push(
      `  burst of 4 slow pings: no page (watched for ${realMinutes(performance.now() - burstStart)} min)`,
    );

    // Sustained critical latency pages within 8 minutes of onset.
    const onset = performance.now();
    sim.faults.add({
      environment: 'production',
      endpoint: 'ping',
      fault: { kind: 'latency', ms: SLOW_PING_MS },
    });
    const page = await eventually(
      () => firstPage('IsaApiLatencyHigh', 'production', 'critical', 'firing', onset),
      10 * REAL_MINUTE_MS + SLACK_MS,
      'IsaApiLatencyHigh critical',
    );
    expect(page.receiver).toBe('pager');
    const pagedAfter = page.at - onset;
    report.push(
      `  sustained critical latency: paged after ${realMinutes(pagedAfter)} min ` +
        `(bound 8 min; ${realMinutes(SLOW_PING_MS)} min of that is the unscaled probe latency)`,
    );
    expect(pagedAfter).toBeLessThanOrEqual(8 * REAL_MINUTE_MS + SLACK_MS);

    // Recovery resolves the page once the window and keep_firing_for have passed.
    const recovery = performance.now();
    sim.faults.clear();
    const resolved = await eventually(
      () => firstPage('IsaApiLatencyHigh', 'production', 'critical', 'resolved', recovery),
      25 * REAL_MINUTE_MS + SLACK_MS,
      'IsaApiLatencyHigh to resolve',
    );
    report.push(`  recovery: resolved after ${realMinutes(resolved.at - recovery)} min`);
  }, 240_000);

  it('pages IsaCredentialsRejected on 401s and never calls it IsaApiDown', async () => {
    const start = performance.now();
    sim.faults.add({
      environment: 'production',
      endpoint: '*',
      fault: { kind: 'status', status: 401 },
    });
    const page = await eventually(
      () => firstPage('IsaCredentialsRejected', 'production', 'critical', 'firing', start),
      10 * REAL_MINUTE_MS + SLACK_MS,
      'IsaCredentialsRejected',
    );
    report.push(`  401s: IsaCredentialsRejected paged after ${realMinutes(page.at - start)} min`);
    sim.faults.clear();
    expect(pages('IsaApiDown', 'firing')).toEqual([]);
    // Nothing in this run was a sandbox emergency.
    expect(
      receiver.notifications.filter((n) =>
        n.alerts.some(
          (a) => a.labels['environment'] === 'sandbox' && a.labels['severity'] === 'critical',
        ),
      ),
    ).toEqual([]);
  }, 120_000);

  it('gives every dashboard panel data from this Prometheus', async () => {
    const empty: string[] = [];
    for (const q of allDashboardQueries()) {
      if (q.mayBeEmpty) continue;
      const expr = interpolate(q.expr, { environment: '.+', instance: '.+' });
      const result = await query(expr);
      if (result.length === 0) empty.push(`${q.dashboard} / ${q.panel}: ${expr}`);
    }
    expect(empty).toEqual([]);
  }, 120_000);

  it('never let the API keys out of the daemon', () => {
    expect(daemon.output()).not.toContain(PRODUCTION_KEY);
    expect(daemon.output()).not.toContain(SANDBOX_KEY);
  });
});
