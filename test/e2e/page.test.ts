/**
 * End to end, with the real tools: simulator fault → isa-monitor → Prometheus → Alertmanager →
 * a webhook that receives the page. Runs on a compressed clock: the daemon's intervals, the
 * rules' windows, `for:` and `keep_firing_for`, and Alertmanager's timers are all divided by one
 * factor (the rules through scripts/rules/scale-rules.ts, from a copy of the real rules file).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { allDashboardQueries, interpolate } from '../../dashboards/src/queries.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { fileSections } from '../support/check-fixtures.js';
import { eventually, startDaemonProcess, type DaemonProcess } from '../support/cli.js';
import {
  notificationsMatching,
  startMonitoringStack,
  writeText,
  type MonitoringStack,
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
let stack: MonitoringStack;
let daemon: DaemonProcess;
const report: string[] = [];

function pages(alertname: string, status: 'firing' | 'resolved', since = 0) {
  return notificationsMatching(stack.receiver, { alertname, status, since });
}

function firstPage(
  alertname: string,
  environment: string,
  severity: string,
  status: 'firing' | 'resolved',
  since: number,
) {
  return notificationsMatching(stack.receiver, {
    alertname,
    environment,
    severity,
    status,
    since,
  })[0];
}

function realMinutes(ms: number): string {
  return ((ms * FACTOR) / 60_000).toFixed(1);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'isa-e2e-'));

  // Over HTTPS with a certificate of its own, trusted through ca_file: the certificate panels
  // need a chain to read, as a real API's base URL has.
  sim = await startSimulator({
    apiKeys: [PRODUCTION_KEY, SANDBOX_KEY],
    qualifyDelayMs: 300,
    tls: { validDays: 90 },
  });
  const caFile = await writeText(join(dir, 'simulator-ca.pem'), sim.caPem ?? '');

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
        ca_file: caFile,
        request_budget_per_second: 10,
        // Every registered check, as its fixtures set it for this test: every dashboard panel
        // needs data.
        ...fileSections((f) => f.config.endToEnd(scaled)),
      })),
    }),
  );
  daemon = startDaemonProcess(['--config', configPath], {
    ISA_PRODUCTION_API_KEY: PRODUCTION_KEY,
    ISA_SANDBOX_API_KEY: SANDBOX_KEY,
  });
  const daemonUrl = await daemon.url;

  // Prometheus and Alertmanager from the shipped examples, on the same compressed clock.
  stack = await startMonitoringStack({
    dir,
    factor: FACTOR,
    targets: [{ host: new URL(daemonUrl).host }],
  });
  await eventually(
    async () =>
      (await stack.query('up{job="isa-monitor"}'))[0]?.value[1] === '1' ? true : undefined,
    30_000,
    'Prometheus to scrape isa-monitor',
  );
}, 120_000);

afterAll(async () => {
  daemon?.child.kill('SIGTERM');
  await daemon?.exit;
  await stack?.stop();
  await sim?.close();
  if (report.length > 0)
    console.log(`\nend-to-end (clock compressed ${FACTOR}x):\n${report.join('\n')}`);
});

describe('the page, end to end with real Prometheus and Alertmanager', () => {
  it('pages on sustained critical latency in production, not on a burst, and resolves after recovery', async () => {
    // Enough pings in the window for the minimum-samples guard.
    await eventually(
      async () => {
        const [row] = await stack.query(
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
      stack.receiver.notifications.filter((n) =>
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
      const result = await stack.query(expr);
      if (result.length === 0) empty.push(`${q.dashboard} / ${q.panel}: ${expr}`);
    }
    expect(empty).toEqual([]);
  }, 120_000);

  it('never let the API keys out of the daemon', () => {
    expect(daemon.output()).not.toContain(PRODUCTION_KEY);
    expect(daemon.output()).not.toContain(SANDBOX_KEY);
  });
});
