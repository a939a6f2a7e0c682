/**
 * `isa-monitor report` against a real Prometheus holding 30 days recorded by the real recorder
 * (docs/cli.md, "report"): known outages, lifecycle failures and a maintenance window are written
 * as the daemon's registry would have exported them every 15 s, backfilled with promtool, and the
 * report must give back exactly what was put in: availability to 5 decimals, each incident's start
 * and duration to the minute, the maintenance left out; and the objectives' shipped recording
 * rules, evaluated over the same days by promtool, must record the error budget remaining the
 * report gives (docs/alerts.md, "Objectives").
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLO_GROUP } from '../../scripts/rules/slo-rules.js';
import {
  freePort,
  queryPrometheus,
  requireTool,
  startProcess,
  waitForHttp,
  type ManagedProcess,
} from '../e2e/stack.js';
import { PING_EVENTS } from '../../src/checks/ping/scenario-results.js';
import { runCli } from '../support/cli.js';
import { writeOpenMetrics } from './backfill.js';
import { recordingRules, ruleLayers, rulesFile } from './rule-layers.js';

const DAY = 1440;
const MINUTES = 30 * DAY;
const T0 = Date.UTC(2026, 9, 1) / 1000;
const FAILED = new Set([
  'server_error',
  'timeout',
  'network_error',
  'unexpected_status',
  'invalid_body',
]);
const FAMILIES = [
  'isa_ping_attempts_total',
  'isa_ping_duration_seconds',
  'isa_maintenance_active',
  'isa_ping_interval_seconds',
  'isa_latency_threshold_seconds',
  'isa_lifecycle_runs_total',
];
// What the report and the rules read: no _sum, the ping histogram's _count alone (the
// ping-latency objective counts its events by it), one threshold level.
const SAMPLES = (name: string) =>
  !name.endsWith('_sum') &&
  (!name.endsWith('_count') || name === 'isa_ping_duration_seconds_count');
/** Lifecycle results and threshold levels these days never have are always 0: left out. */
const LIFECYCLE_SEEN = new Set([
  'success',
  'qualify_timeout',
  'create_failed',
  'unauthorized',
  'qualify_failed',
  'rate_limited',
]);
const SERIES = (name: string, labels: Readonly<Record<string, string>>): boolean =>
  (labels['level'] ?? 'warning') === 'warning' &&
  (name !== 'isa_lifecycle_runs_total' || LIFECYCLE_SEEN.has(labels['result'] ?? ''));

/** One event per minute, with runs of `event` from minute `at`. */
function timeline(minutes: number, fill: string, runs: Array<[number, number, string]>): string[] {
  const events = Array<string>(minutes).fill(fill);
  for (const [at, length, event] of runs) events.fill(event, at, at + length);
  return events;
}

/** `N*event` runs, the scenario timeline syntax (src/checks/shared/scenario.ts). */
function encode(events: readonly string[]): string {
  const out: string[] = [];
  for (let i = 0; i < events.length;) {
    let j = i;
    while (events[j] === events[i]) j++;
    out.push(`${j - i}*${events[i]}`);
    i = j;
  }
  return out.join(' ');
}

// Production, 30 days at location "fra", with two maintenance windows.
const MAINTENANCE: [number, number] = [25 * DAY + 120, 120];
// A working day of maintenance, its pings slow and its lifecycle runs failing: left out of the
// latency and the lifecycle figures too. Unmasked, its 480 slow pings (over 1 % of the month)
// would move p99 and the ping-latency objective, and its runs the lifecycle-success objective.
const LONG_MAINTENANCE: [number, number] = [6 * DAY + 600, 480];
const PROD_PINGS = timeline(MINUTES, 'ok', [
  [2 * DAY + 600, 7, 'timeout'],
  // Slower than the warning threshold, outside maintenance: bad events of ping-latency.
  [4 * DAY + 300, 20, 'slow_warning'],
  [LONG_MAINTENANCE[0], LONG_MAINTENANCE[1], 'slow_critical'],
  [9 * DAY + 195, 3, 'server_error'],
  [9 * DAY + 198, 2, 'timeout'],
  // The key refused and traffic limited: our problems, not failures.
  [12 * DAY + 720, 5, 'unauthorized'],
  [12 * DAY + 725, 3, 'rate_limited'],
  [15 * DAY + 480, 1, 'network_error'],
  [20 * DAY + 1350, 30, 'timeout'],
  [20 * DAY + 1382, 4, 'invalid_body'],
  // Inside the maintenance window: left out.
  [MAINTENANCE[0] + 30, 60, 'server_error'],
  // Across midnight.
  [28 * DAY + 1438, 4, 'unexpected_status'],
]);
const PROD_MAINTENANCE = timeline(MINUTES, '0', [
  [MAINTENANCE[0], MAINTENANCE[1], '1'],
  [LONG_MAINTENANCE[0], LONG_MAINTENANCE[1], '1'],
]);
const PROD_LIFECYCLE: string[] = timeline(MINUTES, '-', []).map((_, m) =>
  m % 10 === 0 ? 'success' : '-',
);
for (const [m, result] of [
  [5000, 'qualify_timeout'],
  [15000, 'create_failed'],
  [25000, 'unauthorized'],
  [30160, 'qualify_failed'],
  [40000, 'rate_limited'],
] as const) {
  PROD_LIFECYCLE[m] = result;
}
// Every run inside a maintenance window fails: none of them counts.
for (const [start, length] of [MAINTENANCE, LONG_MAINTENANCE]) {
  for (let m = start; m < start + length; m += 10) PROD_LIFECYCLE[m] = 'qualify_failed';
}
// Staging: a second, small monitor: its last two days only, at location "iad".
const STAGING_START = 28 * DAY;
const STAGING_PINGS = timeline(2 * DAY, 'ok', [[1000, 4, 'server_error']]);

interface Truth {
  availability: number;
  pings: number;
  failed: number;
  maintenanceSeconds: number;
  incidents: Array<{ start: string; duration_seconds: number; cause: string }>;
}

/** What the timelines mean, by the definitions of docs/cli.md, computed apart from the report. */
function truth(pings: string[], maintenance: string[], startMinute: number): Truth {
  let total = 0;
  let failed = 0;
  const incidents: Truth['incidents'] = [];
  let open: { start: number; causes: Map<string, number> } | null = null;
  const close = (m: number) => {
    if (!open) return;
    const cause = [...open.causes].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '';
    incidents.push({
      start: iso(T0 + open.start * 60),
      duration_seconds: (m - open.start) * 60,
      cause,
    });
    open = null;
  };
  pings.forEach((event, i) => {
    const m = startMinute + i;
    if (maintenance[i] === '1') return close(m);
    total += 1;
    if (!FAILED.has(event)) return close(m);
    failed += 1;
    open ??= { start: m, causes: new Map() };
    open.causes.set(event, (open.causes.get(event) ?? 0) + 1);
  });
  close(startMinute + pings.length);
  return {
    availability: 1 - failed / total,
    pings: total,
    failed,
    maintenanceSeconds: maintenance.filter((v) => v === '1').length * 60,
    incidents,
  };
}

const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');

/** The warning threshold the scenario environments get (the configuration's default). */
const WARNING_SECONDS = 0.5;
const OWN_LIFECYCLE = new Set(['unauthorized', 'rate_limited', 'budget']);

/**
 * The ping-latency objective's SLI (pings within the warning threshold, by each ping event's
 * duration) and the lifecycle runs (ours left out) and successes, outside maintenance.
 */
function latencyAndLifecycle(
  pings: readonly string[],
  lifecycle: readonly string[],
  maintenance: readonly string[],
): { withinWarning: number; runs: number; successes: number } {
  let total = 0;
  let within = 0;
  let runs = 0;
  let successes = 0;
  pings.forEach((event, m) => {
    if (maintenance[m] === '1') return;
    const seconds = PING_EVENTS[event]?.seconds;
    if (seconds === undefined) throw new Error(`no ping event ${event}`);
    total += 1;
    if (seconds <= WARNING_SECONDS) within += 1;
  });
  lifecycle.forEach((result, m) => {
    if (result === '-' || OWN_LIFECYCLE.has(result) || maintenance[m] === '1') return;
    runs += 1;
    if (result === 'success') successes += 1;
  });
  return { withinWarning: within / total, runs, successes };
}

let dir: string;
let prometheus: ManagedProcess | undefined;
let port: number;
let url: string;
const timings: Record<string, number> = {};

/** Prometheus on the backfilled data in `dir`/tsdb, on loopback `port`; no scrapes, no rules. */
async function startPrometheus(): Promise<void> {
  const config = join(dir, 'prometheus.yml');
  await writeFile(config, 'global: {}\n');
  prometheus = await startProcess(
    'prometheus',
    requireTool('prometheus'),
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'tsdb')}`,
      // The backfilled days are older than the default retention of 15 days.
      '--storage.tsdb.retention.time=100y',
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    dir,
  );
  await waitForHttp(`${url}/-/ready`, 120_000);
}

beforeAll(async () => {
  const promtool = requireTool('promtool');
  dir = await mkdtemp(join(tmpdir(), 'isa-report-'));
  let t = performance.now();
  const production = await writeOpenMetrics(
    {
      start: T0,
      minutes: MINUTES,
      scrapeSeconds: 15,
      location: 'fra',
      target: { job: 'isa-monitor', instance: 'monitor-a:9464' },
      environments: {
        production: {
          ping: encode(PROD_PINGS),
          lifecycle: encode(PROD_LIFECYCLE),
          maintenance: encode(PROD_MAINTENANCE),
        },
      },
      families: FAMILIES,
      samples: SAMPLES,
      series: SERIES,
    },
    join(dir, 'production'),
  );
  const staging = await writeOpenMetrics(
    {
      start: T0 + STAGING_START * 60,
      minutes: 2 * DAY,
      scrapeSeconds: 15,
      location: 'iad',
      target: { job: 'isa-monitor', instance: 'monitor-b:9464' },
      environments: { staging: { ping: encode(STAGING_PINGS) } },
      families: FAMILIES,
      samples: SAMPLES,
      series: SERIES,
    },
    join(dir, 'staging'),
  );
  const files = [...production.files, ...staging.files];
  timings['samples'] = production.samples + staging.samples;
  timings['record_ms'] = performance.now() - t;
  t = performance.now();
  const data = join(dir, 'tsdb');
  for (const file of files) {
    execFileSync(
      promtool,
      ['tsdb', 'create-blocks-from', 'openmetrics', '--max-block-duration=744h', '-q', file, data],
      { stdio: 'pipe' },
    );
    await rm(file);
  }
  timings['promtool_ms'] = performance.now() - t;
  port = await freePort();
  url = `http://127.0.0.1:${port}`;
  await startPrometheus();
}, 600_000);

afterAll(async () => {
  await prometheus?.stop();
  console.log(`report integration timings: ${JSON.stringify(timings)}`);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** `report` over `from`..`to` (seconds) against the backfilled Prometheus. */
const reportArgs = (from: number, to: number, ...rest: string[]): string[] => [
  'report',
  '--prometheus',
  url,
  '--from',
  iso(from),
  '--to',
  iso(to),
  ...rest,
];

describe('report over 30 backfilled days', () => {
  it('gives back the availability, incidents and maintenance that were recorded', async () => {
    const t = performance.now();
    const run = await runCli(reportArgs(T0, T0 + MINUTES * 60, '--format', 'json'), {
      timeoutMs: 240_000,
    });
    timings['report_ms'] = performance.now() - t;
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      environments: Array<Record<string, unknown> & { environment: string }>;
    };
    expect(report.environments.map((e) => e.environment)).toEqual(['production', 'staging']);

    const cases = [
      ['production', truth(PROD_PINGS, PROD_MAINTENANCE, 0), 'fra'],
      ['staging', truth(STAGING_PINGS, Array<string>(2 * DAY).fill('0'), STAGING_START), 'iad'],
    ] as const;
    for (const [name, expected, location] of cases) {
      const env = report.environments.find((e) => e.environment === name) as unknown as {
        availability: number;
        pings: number;
        failed_pings: number;
        maintenance_seconds: number;
        incidents: Array<{ start: string; end: string; duration_seconds: number; cause: string }>;
        error_budget_remaining: number;
        latency_seconds: { p50: number; p95: number; p99: number };
        locations: Array<{ location: string; availability: number; incidents: unknown[] }>;
      };
      expect(env.availability.toFixed(5)).toBe(expected.availability.toFixed(5));
      expect(env.pings).toBe(expected.pings);
      expect(env.failed_pings).toBe(expected.failed);
      expect(env.maintenance_seconds).toBe(expected.maintenanceSeconds);
      expect(
        env.incidents.map(({ start, duration_seconds, cause }) => ({
          start,
          duration_seconds,
          cause,
        })),
      ).toEqual(expected.incidents);
      expect(env.error_budget_remaining.toFixed(4)).toBe(
        (1 - (1 - expected.availability) / 0.005).toFixed(4),
      );
      expect(env.latency_seconds.p50).toBeLessThan(0.1);
      expect(env.locations.map((l) => l.location)).toEqual([location]);
      expect(env.locations[0]?.availability).toBe(env.availability);
      expect(env.locations[0]?.incidents).toEqual(env.incidents);
    }
    const production = report.environments[0] as unknown as {
      lifecycle: { runs: number; success_ratio: number };
      latency_seconds: { p50: number; p95: number; p99: number };
      objectives: Array<{ name: string; sli: number }>;
      days: Array<{ date: string; latency_seconds: { p99: number } }>;
    };
    const expected = latencyAndLifecycle(PROD_PINGS, PROD_LIFECYCLE, PROD_MAINTENANCE);
    // 4320 runs, 2 of them ours (unauthorized, rate_limited), 60 in maintenance (all failed),
    // 3 failures of the API.
    expect(expected.runs).toBe(4258);
    expect(production.lifecycle.runs).toBe(expected.runs);
    expect(production.lifecycle.success_ratio.toFixed(6)).toBe(
      (expected.successes / expected.runs).toFixed(6),
    );
    const sli = (name: string) => production.objectives.find((o) => o.name === name)?.sli;
    expect(sli('lifecycle-success')?.toFixed(5)).toBe(
      (expected.successes / expected.runs).toFixed(5),
    );
    expect(sli('ping-latency')?.toFixed(5)).toBe(expected.withinWarning.toFixed(5));
    // Outside maintenance fewer than 1 % of the pings are slower than 50 ms: every quantile
    // falls in the first bucket, over the month and on the day of the long window.
    for (const q of [production.latency_seconds.p50, production.latency_seconds.p99]) {
      expect(q).toBeLessThanOrEqual(0.05);
    }
    const longDay = iso(T0 + LONG_MAINTENANCE[0] * 60).slice(0, 10);
    expect(
      production.days.find((d) => d.date === longDay)?.latency_seconds.p99,
    ).toBeLessThanOrEqual(0.05);
  }, 300_000);

  it('says so in one line when an environment has no series', async () => {
    const run = await runCli(reportArgs(T0, T0 + 86400, '--environment', 'nowhere'));
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('no isa_ping_attempts_total series');
  });

  it('renders the HTML page and Markdown tables from the same data', async () => {
    const args = reportArgs(T0, T0 + 3 * 86400);
    const page = await runCli([...args, '--format', 'html']);
    expect(page.code).toBe(0);
    expect(page.stdout).toContain('<svg role="img"');
    expect(page.stdout).toContain('@media print');
    expect(page.stdout).not.toMatch(/(src|href)="http/);
    const md = await runCli(args);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('| Availability |');
    expect(md.stdout).toContain('2026-10-03T10:00:00Z');
  }, 120_000);

  // docs/alerts.md, "Objectives": the shipped rules' slo:period_error_budget_remaining:ratio and the
  // report's error_budget_remaining agree, per environment and objective, to 2 decimals. The rules
  // are the generated group itself, evaluated by promtool against this Prometheus. Last: it
  // restarts Prometheus on the recorded series. It takes 1 to 3 minutes on 2 cores, most of it
  // the 5-minute slices of 30 days, which promtool writes as 2-hour blocks. The rules' figure
  // moves by about 0.0005 from run to run: promtool offsets a group's evaluations by a hash of
  // its name and file (a new temporary directory each run), and the slices' edges move with them.
  it('gives each objective the budget remaining the shipped rules record', async () => {
    const promtool = requireTool('promtool');
    const end = T0 + MINUTES * 60;
    const run = await runCli(reportArgs(T0, end, '--format', 'json'), { timeoutMs: 240_000 });
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      environments: Array<{
        environment: string;
        objectives: Array<{ name: string; error_budget_remaining: number | null }>;
      }>;
    };
    const fromReport = new Map<string, number>();
    for (const env of report.environments) {
      for (const o of env.objectives) {
        if (o.error_budget_remaining !== null) {
          fromReport.set(`${env.environment} ${o.name}`, o.error_budget_remaining);
        }
      }
    }

    const t = performance.now();
    const rules = recordingRules(
      await readFile(join(import.meta.dirname, '../../alerts/isa-monitor.rules.yaml'), 'utf8'),
      SLO_GROUP,
    );
    const layers = ruleLayers(rules, ['slo:period_error_budget_remaining:ratio']);
    // 5-minute slices, the period, its burn rate, the budget remaining.
    expect(layers).toHaveLength(4);
    for (const [i, layer] of layers.entries()) {
      const file = join(dir, `layer-${i}.rules.yaml`);
      await writeFile(file, rulesFile(`${SLO_GROUP}-${i}`, layer));
      const out = join(dir, `layer-${i}`);
      execFileSync(
        promtool,
        [
          'tsdb',
          'create-blocks-from',
          'rules',
          '-q',
          `--url=${url}`,
          // The 5-minute slices over the whole 30 days, every minute: the shipped group runs
          // every 15 s, but at one ping a minute (and a lifecycle run every 10) every event
          // falls in the same number of slices either way, so their average weighs each event
          // alike, with a quarter of the evaluations. The layers above read 30 days of slices
          // at each evaluation; only their value at the end is compared, so they are
          // evaluated over the last hour.
          `--start=${i === 0 ? T0 : end - 3600}`,
          `--end=${end}`,
          '--eval-interval=60s',
          `--output-dir=${out}`,
          file,
        ],
        { stdio: 'pipe' },
      );
      // Prometheus reads new blocks when it starts: the next layer reads this one's series.
      await prometheus?.stop();
      for (const block of await readdir(out)) {
        await rename(join(out, block), join(dir, 'tsdb', block));
      }
      await startPrometheus();
    }
    timings['rules_ms'] = performance.now() - t;

    const recorded = await queryPrometheus(url, `slo:period_error_budget_remaining:ratio @ ${end}`);
    const fromRules = new Map(
      recorded.map((s) => [
        `${s.metric['environment']} ${s.metric['sloth_slo']}`,
        Number(s.value[1]),
      ]),
    );
    console.log(
      `budget remaining, rules vs report: ${JSON.stringify(
        [...fromReport].map(([key, value]) => [key, fromRules.get(key), value]),
      )}`,
    );
    // Every objective with events: three in production, two in staging (no lifecycle runs).
    expect([...fromRules.keys()].sort()).toEqual([...fromReport.keys()].sort());
    expect(fromReport.size).toBe(5);
    for (const [key, value] of fromReport) {
      expect(fromRules.get(key), key).toBeCloseTo(value, 2);
    }
  }, 900_000);
});
