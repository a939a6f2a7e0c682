/**
 * A spec that is not isa-monitor's, on metrics of its own, against a real Prometheus
 * (docs/cli.md, "Objectives of the spec"; docs/alerts.md, "Objectives"): two hours of synthetic
 * counters backfilled with promtool, `report --slo` computes each objective from the spec's own
 * queries, and Sloth's UI queries (its backend's, internal/http/backend/storage/prometheus/ in
 * slok/sloth) find the objectives the generated rules record, ours and this spec's.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sloRulesFragment } from '../../scripts/rules/slo-rules.js';
import { parseSloSpec } from '../../src/report/sloth-spec.js';
import {
  freePort,
  queryPrometheus,
  requireTool,
  startProcess,
  waitForHttp,
  type ManagedProcess,
} from '../e2e/stack.js';
import { runCli } from '../support/cli.js';

const SPEC = 'test/report/fixtures/shop.sloth.yaml';
const STEP = 15;
/** The report's range: two hours ending on a 5-minute boundary at most 5 minutes ago. */
const TO = Math.floor(Date.now() / 1000 / 300) * 300;
const FROM = TO - 7200;
/** Per scrape: the first hour 2 failures in 20 operations (0.1), the second 1 in 50 (0.02). */
const phase = (t: number) => (t <= FROM + 3600 ? { ops: 20, fails: 2 } : { ops: 50, fails: 1 });

let dir = '';
let url = '';
let prometheus: ManagedProcess | undefined;

/** OpenMetrics with timestamps from 10 minutes before the range until now. */
function openMetrics(): string {
  const ops: string[] = [];
  const fails: string[] = [];
  let o = 0;
  let f = 0;
  const now = Math.floor(Date.now() / 1000 / STEP) * STEP;
  for (let t = FROM - 600; t <= now; t += STEP) {
    o += phase(t).ops;
    f += phase(t).fails;
    ops.push(`shop_cart_operations_total{job="shop"} ${o} ${t}`);
    fails.push(`shop_cart_failures_total{job="shop"} ${f} ${t}`);
  }
  return [
    '# TYPE shop_cart_operations counter',
    ...ops,
    '# TYPE shop_cart_failures counter',
    ...fails,
    '# EOF',
    '',
  ].join('\n');
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'isa-sloth-'));
  const data = join(dir, 'data.om');
  await writeFile(data, openMetrics());
  execFileSync(
    requireTool('promtool'),
    ['tsdb', 'create-blocks-from', 'openmetrics', '-q', data, join(dir, 'tsdb')],
    {
      stdio: 'pipe',
    },
  );
  // The rules of this spec, written by the generator that writes isa-monitor's, and ours.
  const spec = parseSloSpec(await readFile(SPEC, 'utf8'), SPEC);
  await writeFile(join(dir, 'shop.rules.yaml'), sloRulesFragment(spec));
  await writeFile(
    join(dir, 'prometheus.yml'),
    [
      'global: { evaluation_interval: 1s }',
      'rule_files:',
      `  - ${join(dir, 'shop.rules.yaml')}`,
      `  - ${join(process.cwd(), 'alerts/isa-monitor.rules.yaml')}`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  prometheus = await startProcess(
    'prometheus',
    requireTool('prometheus'),
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'tsdb')}`,
      '--storage.tsdb.retention.time=100y',
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    dir,
  );
  await waitForHttp(`${url}/-/ready`, 120_000);
}, 180_000);

afterAll(async () => {
  await prometheus?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('report --slo on a spec of another service', () => {
  it('computes a raw and an events SLI from their own queries over 5-minute slices', async () => {
    const iso = (s: number) => new Date(s * 1000).toISOString();
    const run = await runCli([
      'report',
      '--prometheus',
      url,
      '--from',
      iso(FROM),
      '--to',
      iso(TO),
      '--slo',
      SPEC,
      '--format',
      'json',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      environments: unknown[];
      slos: Array<{
        id: string;
        sli_type: string;
        counted: string;
        series: Array<Record<string, unknown>>;
      }>;
    };
    expect(report.environments).toEqual([]);
    // 12 slices at 0.1 and 12 at 0.02: an error ratio of 0.06, an SLI of 0.94.
    const [raw, events] = report.slos;
    expect(raw).toMatchObject({ id: 'shop-cart-raw', sli_type: 'raw' });
    expect(raw?.counted).toContain('error_ratio_query per 5-minute slice');
    expect(raw?.series).toEqual([
      { labels: {}, sli: 0.94, error_budget_remaining: -0.2, slices: 24, slices_in_maintenance: 0 },
    ]);
    expect(events).toMatchObject({ id: 'shop-cart-events', sli_type: 'events' });
    expect(events?.counted).toContain('error_query ÷ total_query per 5-minute slice');
    expect(events?.series).toEqual([
      { labels: {}, sli: 0.94, error_budget_remaining: 0.4, slices: 24, slices_in_maintenance: 0 },
    ]);
  }, 60_000);
});

describe("Sloth's UI queries on the generated rules", () => {
  /** Polls `expr` until `ready` holds for its samples (the rules evaluate every second). */
  async function until(expr: string, ready: (n: number) => boolean) {
    for (let i = 0; i < 60; i++) {
      const samples = await queryPrometheus(url, expr);
      if (ready(samples.length)) return samples;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    throw new Error(`no answer for ${expr}`);
  }

  it('lists every objective by sloth_slo_info with Sloth labels', async () => {
    const info = await until('sloth_slo_info{sloth_id!=""}', (n) => n >= 5);
    const ids = info.map((s) => s.metric['sloth_id']).sort();
    expect(ids).toEqual([
      'isa-monitor-lifecycle-success',
      'isa-monitor-ping-availability',
      'isa-monitor-ping-latency',
      'shop-cart-events',
      'shop-cart-raw',
    ]);
    expect(info.find((s) => s.metric['sloth_id'] === 'shop-cart-raw')?.metric).toMatchObject({
      sloth_service: 'shop',
      sloth_slo: 'cart-raw',
      sloth_objective: '95',
      sloth_spec: 'prometheus/v1',
      sloth_mode: 'cli-gen-prom',
      sloth_version: 'isa-monitor',
      team: 'payments',
    });
  }, 60_000);

  it('finds each objective with its windows, period, burn rate and budget', async () => {
    const windows = await until(
      'count({__name__=~"^slo:sli_error:ratio_rate.*"}) by (__name__, sloth_id)',
      (n) => n >= 16,
    );
    const rawWindows = windows
      .filter((s) => s.metric['sloth_id'] === 'shop-cart-raw')
      .map((s) => (s.metric['__name__'] ?? '').replace('slo:sli_error:ratio_rate', ''))
      .sort();
    expect(rawWindows).toEqual(['1d', '1h', '2h', '30d', '30m', '3d', '5m', '6h']);
    const period = await until(
      'max(slo:time_period:days{sloth_id!=""}) by (sloth_id)',
      (n) => n >= 2,
    );
    expect(period.map((s) => [s.metric['sloth_id'], s.value[1]])).toEqual(
      expect.arrayContaining([
        ['shop-cart-raw', '30'],
        ['shop-cart-events', '30'],
      ]),
    );
    // Now in the second phase: 0.02 errors of a 0.05 budget, a burn rate of 0.4.
    const burn = await until('slo:current_burn_rate:ratio{sloth_id!=""}', (n) => n >= 2);
    const rawBurn = burn.find((s) => s.metric['sloth_id'] === 'shop-cart-raw');
    expect(Number(rawBurn?.value[1])).toBeCloseTo(0.4, 6);
    const budget = await until(
      'slo:period_error_budget_remaining:ratio{sloth_id!=""}',
      (n) => n >= 2,
    );
    const rawBudget = budget.find((s) => s.metric['sloth_id'] === 'shop-cart-raw');
    expect(Number(rawBudget?.value[1])).toBeCloseTo(0.6, 6);
  }, 60_000);
});
