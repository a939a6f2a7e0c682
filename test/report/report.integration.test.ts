/**
 * `isa-monitor report` against a real Prometheus holding 30 days recorded by the real recorder
 * (docs/cli.md, "report"): known outages, lifecycle failures and a maintenance window are written
 * as the daemon's registry would have exported them every 15 s, backfilled with promtool, and the
 * report must give back exactly what was put in: availability to 5 decimals, each incident's start
 * and duration to the minute, the maintenance left out; and the objectives' shipped recording
 * rules, evaluated over the same days by promtool, must record the error budget remaining the
 * report gives (docs/alerts.md, "Objectives").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLO_GROUP } from '../../scripts/rules/slo-rules.js';
import { queryPrometheus } from '../e2e/stack.js';
import { PING_EVENTS } from '../../src/checks/ping/scenario-results.js';
import { runCli } from '../support/cli.js';
import {
  DAY,
  FAILED,
  iso,
  LONG_MAINTENANCE,
  MINUTES,
  OWN_LIFECYCLE,
  PROD_LIFECYCLE,
  PROD_MAINTENANCE,
  PROD_PINGS,
  STAGING_PINGS,
  STAGING_START,
  startBackfilledMonth,
  T0,
  type BackfilledMonth,
  WARNING_SECONDS,
  reportArgs,
  reportBudgets,
  shippedSloRules,
} from './backfilled-month.js';
import { ruleLayers } from './rule-layers.js';

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

let month: BackfilledMonth;
let url: string;

beforeAll(async () => {
  month = await startBackfilledMonth();
  url = month.url;
}, 600_000);

afterAll(async () => {
  console.log(`report integration timings: ${JSON.stringify(month?.timings)}`);
  await month?.stop();
});

describe('report over 30 backfilled days', () => {
  it('gives back the availability, incidents and maintenance that were recorded', async () => {
    const t = performance.now();
    const run = await runCli(reportArgs(url, T0, T0 + MINUTES * 60, '--format', 'json'), {
      timeoutMs: 240_000,
    });
    month.timings['report_ms'] = performance.now() - t;
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
    const run = await runCli(reportArgs(url, T0, T0 + 86400, '--environment', 'nowhere'));
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('no isa_ping_attempts_total series');
  });

  it('renders the HTML page and Markdown tables from the same data', async () => {
    const args = reportArgs(url, T0, T0 + 3 * 86400);
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
    const end = T0 + MINUTES * 60;
    const fromReport = await reportBudgets(url, T0, end);

    const t = performance.now();
    const layers = ruleLayers(await shippedSloRules(), ['slo:period_error_budget_remaining:ratio']);
    // 5-minute slices, the period, its burn rate, the budget remaining.
    expect(layers).toHaveLength(4);
    for (const [i, layer] of layers.entries()) {
      // The 5-minute slices over the whole 30 days, every minute: the shipped group runs every
      // 15 s, but at one ping a minute (and a lifecycle run every 10) every event falls in the
      // same number of slices either way, so their average weighs each event alike, with a
      // quarter of the evaluations. The layers above read 30 days of slices at each evaluation;
      // only their value at the end is compared, so they are evaluated over the last hour.
      await month.recordRules(`${SLO_GROUP}-${i}`, layer, {
        start: i === 0 ? T0 : end - 3600,
        end,
        intervalSeconds: 60,
      });
      // The next layer reads this one's series.
      await month.restart();
    }
    month.timings['rules_ms'] = performance.now() - t;

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
