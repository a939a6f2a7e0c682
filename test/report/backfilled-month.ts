/**
 * Thirty days of isa-monitor series in a real Prometheus, for the tests that read recorded history
 * (docs/cli.md, "report"; docs/alerts.md, "Objectives"): known outages, lifecycle failures and
 * maintenance windows, written as the daemon's registry would have exported them every 15 s,
 * backfilled with promtool, served by a Prometheus on loopback; and the shipped recording rules
 * evaluated over chosen stretches of it by `promtool tsdb create-blocks-from rules`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  requireTool,
  startProcess,
  waitForHttp,
  type ManagedProcess,
} from '../e2e/stack.js';
import { SLO_GROUP } from '../../scripts/rules/slo-rules.js';
import { runCli } from '../support/cli.js';
import { writeOpenMetrics } from './backfill.js';
import { recordingRules, rulesFile, type RecordingRule } from './rule-layers.js';

export const DAY = 1440;
export const MINUTES = 30 * DAY;
export const T0 = Date.UTC(2026, 9, 1) / 1000;
/** The ping results the ping-availability objective counts as failures. */
export const FAILED = new Set([
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
export const MAINTENANCE: [number, number] = [25 * DAY + 120, 120];
// A working day of maintenance, its pings slow and its lifecycle runs failing: left out of the
// latency and the lifecycle figures too. Unmasked, its 480 slow pings (over 1 % of the month)
// would move p99 and the ping-latency objective, and its runs the lifecycle-success objective.
export const LONG_MAINTENANCE: [number, number] = [6 * DAY + 600, 480];
export const PROD_PINGS = timeline(MINUTES, 'ok', [
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
export const PROD_MAINTENANCE = timeline(MINUTES, '0', [
  [MAINTENANCE[0], MAINTENANCE[1], '1'],
  [LONG_MAINTENANCE[0], LONG_MAINTENANCE[1], '1'],
]);
/** A lifecycle run every 10 minutes (`-`: no run that minute). */
export const PROD_LIFECYCLE: string[] = timeline(MINUTES, '-', []).map((_, m) =>
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
export const STAGING_START = 28 * DAY;
export const STAGING_PINGS = timeline(2 * DAY, 'ok', [[1000, 4, 'server_error']]);

/** The warning threshold the scenario environments get (the configuration's default). */
export const WARNING_SECONDS = 0.5;
/** Lifecycle results of our own making (key, traffic, budget): no objective counts them. */
export const OWN_LIFECYCLE = new Set(['unauthorized', 'rate_limited', 'budget']);

/** RFC 3339 to the second, as the command line takes and gives times. */
export const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');

/** A Prometheus serving the month: restarted to read blocks written beside it. */
export interface BackfilledMonth {
  dir: string;
  url: string;
  timings: Record<string, number>;
  stop(): Promise<void>;
  /**
   * Evaluates `rules` over [`start`, `end`] (Unix seconds) every `intervalSeconds` against the
   * running Prometheus; the new blocks are served once {@link restart} is called.
   */
  recordRules(
    name: string,
    rules: readonly RecordingRule[],
    range: { start: number; end: number; intervalSeconds: number },
  ): Promise<void>;
  /** Restarts Prometheus so that it serves every block recorded so far. */
  restart(): Promise<void>;
}

/** The production and staging monitors' OpenMetrics files, written under `dir`. */
async function writeMonth(dir: string): Promise<{ files: string[]; samples: number }> {
  const common = { scrapeSeconds: 15, families: FAMILIES, samples: SAMPLES, series: SERIES };
  const production = await writeOpenMetrics(
    {
      ...common,
      start: T0,
      minutes: MINUTES,
      location: 'fra',
      target: { job: 'isa-monitor', instance: 'monitor-a:9464' },
      environments: {
        production: {
          ping: encode(PROD_PINGS),
          lifecycle: encode(PROD_LIFECYCLE),
          maintenance: encode(PROD_MAINTENANCE),
        },
      },
    },
    join(dir, 'production'),
  );
  const staging = await writeOpenMetrics(
    {
      ...common,
      start: T0 + STAGING_START * 60,
      minutes: 2 * DAY,
      location: 'iad',
      target: { job: 'isa-monitor', instance: 'monitor-b:9464' },
      environments: { staging: { ping: encode(STAGING_PINGS) } },
    },
    join(dir, 'staging'),
  );
  return {
    files: [...production.files, ...staging.files],
    samples: production.samples + staging.samples,
  };
}

/**
 * Records the month, backfills it with promtool and starts a Prometheus on it (no scrapes, no
 * rules) on a free loopback port. Call `stop()` when done; the temporary directory goes with it.
 */
export async function startBackfilledMonth(): Promise<BackfilledMonth> {
  const promtool = requireTool('promtool');
  const dir = await mkdtemp(join(tmpdir(), 'isa-month-'));
  const timings: Record<string, number> = {};
  let t = performance.now();
  const { files, samples } = await writeMonth(dir);
  timings['samples'] = samples;
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
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let prometheus: ManagedProcess | undefined = await startPrometheus(dir, port, url);
  const pending: string[] = [];
  return {
    dir,
    url,
    timings,
    async stop() {
      await prometheus?.stop();
      prometheus = undefined;
      await rm(dir, { recursive: true, force: true });
    },
    async recordRules(name, rules, { start, end, intervalSeconds }) {
      pending.push(await evaluateRules({ dir, url, name, rules, start, end, intervalSeconds }));
    },
    async restart() {
      await prometheus?.stop();
      // Prometheus reads new blocks when it starts.
      for (const out of pending.splice(0)) {
        for (const block of await readdir(out)) await rename(join(out, block), join(data, block));
      }
      prometheus = await startPrometheus(dir, port, url);
    },
  };
}

/** Prometheus on the backfilled data in `dir`/tsdb, on loopback `port`; no scrapes, no rules. */
async function startPrometheus(dir: string, port: number, url: string): Promise<ManagedProcess> {
  const config = join(dir, 'prometheus.yml');
  await writeFile(config, 'global: {}\n');
  const prometheus = await startProcess(
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
  return prometheus;
}

/** `promtool tsdb create-blocks-from rules` for one rule group; returns its output directory. */
async function evaluateRules(o: {
  dir: string;
  url: string;
  name: string;
  rules: readonly RecordingRule[];
  start: number;
  end: number;
  intervalSeconds: number;
}): Promise<string> {
  const file = join(o.dir, `${o.name}.rules.yaml`);
  await writeFile(file, rulesFile(o.name, o.rules));
  const out = join(o.dir, o.name);
  execFileSync(
    requireTool('promtool'),
    [
      'tsdb',
      'create-blocks-from',
      'rules',
      '-q',
      `--url=${o.url}`,
      `--start=${o.start}`,
      `--end=${o.end}`,
      `--eval-interval=${o.intervalSeconds}s`,
      `--output-dir=${out}`,
      file,
    ],
    { stdio: 'pipe' },
  );
  return out;
}

/** The recording rules of the shipped objectives' group, as `npm run generate` wrote them. */
export async function shippedSloRules(): Promise<RecordingRule[]> {
  const text = await readFile(
    join(import.meta.dirname, '../../alerts/isa-monitor.rules.yaml'),
    'utf8',
  );
  return recordingRules(text, SLO_GROUP);
}

/** `isa-monitor report` over `from`..`to` (Unix seconds) against the Prometheus at `url`. */
export const reportArgs = (url: string, from: number, to: number, ...rest: string[]): string[] => [
  'report',
  '--prometheus',
  url,
  '--from',
  iso(from),
  '--to',
  iso(to),
  ...rest,
];

/**
 * `isa-monitor report --format json` over [`from`, `to`] (Unix seconds): each objective's error
 * budget remaining, keyed `<environment> <objective>` (objectives without events left out).
 */
export async function reportBudgets(
  url: string,
  from: number,
  to: number,
): Promise<Map<string, number>> {
  const args = reportArgs(url, from, to, '--format', 'json');
  const run = await runCli(args, { timeoutMs: 240_000 });
  if (run.code !== 0) throw new Error(`report exited ${run.code}: ${run.stderr}`);
  const report = JSON.parse(run.stdout) as {
    environments: Array<{
      environment: string;
      objectives: Array<{ name: string; error_budget_remaining: number | null }>;
    }>;
  };
  const budgets = new Map<string, number>();
  for (const env of report.environments) {
    for (const o of env.objectives) {
      if (o.error_budget_remaining !== null) {
        budgets.set(`${env.environment} ${o.name}`, o.error_budget_remaining);
      }
    }
  }
  return budgets;
}
