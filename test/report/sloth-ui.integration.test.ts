/**
 * Sloth's UI and Grafana dashboards on isa-monitor's objectives (docs/alerts.md, "Sloth's UI and
 * dashboards"). A month of isa-monitor series is backfilled into a real Prometheus (the month of
 * report.integration.test.ts, test/report/backfilled-month.ts) and the shipped rules of the
 * objectives' group are evaluated over it by promtool. The moment the UI looks is NOW, day 21 at
 * 22:43 UTC, 13 minutes into a 30-minute outage of production, 3 minutes after a failed lifecycle
 * run: every objective is burning, at a rate the backfilled events fix.
 *
 * Sloth's UI backend issues its queries (sloth-ui.ts, taken from slok/sloth
 * `internal/http/backend/storage/prometheus/`) and must list each objective with Sloth's labels,
 * its windows and period, a current burn rate and windowed ratios within one event of the
 * events' own count, and a period budget within 0.005 of `isa-monitor report` over the same days.
 * Then every panel query of Sloth's two Grafana dashboards (sloth-dashboards.ts) runs against the
 * same Prometheus, and which return data is pinned and printed (docs/alerts.md has the table).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryPrometheusRange, type Sample } from '../e2e/stack.js';
import { PING_EVENTS } from '../../src/checks/ping/scenario-results.js';
import {
  DAY,
  FAILED,
  OWN_LIFECYCLE,
  PROD_LIFECYCLE,
  PROD_PINGS,
  reportBudgets,
  shippedSloRules,
  startBackfilledMonth,
  T0,
  WARNING_SECONDS,
  type BackfilledMonth,
} from './backfilled-month.js';
import { ruleLayers } from './rule-layers.js';
import { availabilityQuery, chartWindow, slothUiSlos, type UiSlo } from './sloth-ui.js';
import {
  DASHBOARD_QUERIES,
  SLI_WINDOWS,
  substitute,
  VARIABLE_QUERIES,
} from './sloth-dashboards.js';

/** Minute 30163 of the month: the outage began at 30150, the failed run was at 30160. */
const NOW_MINUTE = 20 * DAY + 1363;
const NOW = T0 + NOW_MINUTE * 60;
/** The rules other than the 5-minute slices are evaluated over the last 20 minutes only. */
const RECENT = 1200;
const OBJECTIVES = [
  { slo: 'ping-availability', objective: 99.5 },
  { slo: 'ping-latency', objective: 95 },
  { slo: 'lifecycle-success', objective: 99 },
] as const;
type Objective = (typeof OBJECTIVES)[number]['slo'];
const BURN_WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'] as const;

let month: BackfilledMonth;

/** An instant query at `at` (Unix seconds); throws when Prometheus refuses it. */
async function instant(expr: string, at = NOW): Promise<Sample[]> {
  const params = new URLSearchParams({ query: expr, time: String(at) });
  const body = (await (await fetch(`${month.url}/api/v1/query?${params}`)).json()) as {
    status: string;
    error?: string;
    data: { result: Sample[] | [number, string]; resultType: string };
  };
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
  if (body.data.resultType === 'scalar') return [{ metric: {}, value: body.data.result as never }];
  return body.data.result as Sample[];
}

/**
 * The objectives' group as Prometheus would have recorded it up to NOW: the 5-minute slices over
 * the month (every minute, as report.integration.test.ts does), the 1-hour ratio over the last 3
 * hours (dashboard 14348's month budget samples it on the hour), the rest over the last 20
 * minutes, layer by layer.
 */
async function recordObjectiveRules(): Promise<void> {
  const rules = await shippedSloRules();
  const [ground = [], ...above] = ruleLayers(
    rules,
    rules.map((r) => r.record),
  );
  const slices = ground.filter((r) => r.record === 'slo:sli_error:ratio_rate5m');
  const hourly = ground.filter((r) => r.record === 'slo:sli_error:ratio_rate1h');
  const recent = { start: NOW - RECENT, end: NOW, intervalSeconds: 60 };
  await month.recordRules('slo-slices', slices, { start: T0, end: NOW, intervalSeconds: 60 });
  await month.recordRules('slo-hourly', hourly, {
    start: NOW - 3 * 3600 - 600,
    end: NOW - RECENT - 60,
    intervalSeconds: 60,
  });
  const rest = ground.filter((r) => r.record !== 'slo:sli_error:ratio_rate5m');
  await month.recordRules('slo-0', rest, recent);
  await month.restart();
  for (const [i, layer] of above.entries()) {
    await month.recordRules(`slo-${i + 1}`, layer, recent);
    await month.restart();
  }
}

beforeAll(async () => {
  month = await startBackfilledMonth();
  const t = performance.now();
  await recordObjectiveRules();
  month.timings['rules_ms'] = performance.now() - t;
}, 900_000);

afterAll(async () => {
  console.log(`sloth ui timings: ${JSON.stringify(month?.timings)}`);
  await month?.stop();
});

/** Bad and counted events of `objective` in production at `minute`, by docs/alerts.md. */
function eventAt(objective: Objective, minute: number): { bad: number; total: number } {
  if (objective === 'lifecycle-success') {
    const run = PROD_LIFECYCLE[minute] ?? '-';
    if (run === '-' || OWN_LIFECYCLE.has(run)) return { bad: 0, total: 0 };
    return { bad: run === 'success' ? 0 : 1, total: 1 };
  }
  const ping = PROD_PINGS[minute] ?? 'ok';
  if (objective === 'ping-availability') return { bad: FAILED.has(ping) ? 1 : 0, total: 1 };
  const seconds = PING_EVENTS[ping]?.seconds;
  if (seconds === undefined) throw new Error(`no ping event ${ping}`);
  return { bad: seconds > WARNING_SECONDS ? 1 : 0, total: 1 };
}

/**
 * The error ratio a window ending at NOW can hold: its events are those of minutes NOW−w .. NOW−1,
 * give or take one minute at either edge (the rules are evaluated up to a minute before NOW, on
 * 15-second scrapes). Returns the least and the greatest.
 */
function ratioBounds(objective: Objective, windowMinutes: number): [number, number] {
  const ratios: number[] = [];
  for (const first of [-1, 0, 1].map((d) => NOW_MINUTE - windowMinutes + d)) {
    for (const last of [NOW_MINUTE - 2, NOW_MINUTE - 1]) {
      let bad = 0;
      let total = 0;
      for (let m = first; m <= last; m++) {
        const e = eventAt(objective, m);
        bad += e.bad;
        total += e.total;
      }
      if (total > 0) ratios.push(bad / total);
    }
  }
  return [Math.min(...ratios), Math.max(...ratios)];
}

const minutesOf = (w: string) => (w.endsWith('d') ? 1440 : w.endsWith('h') ? 60 : 1) * parseInt(w);
const budgetOf = (objective: number) => 1 - objective / 100;

describe("Sloth's UI backend on the objectives' rules", () => {
  let slos: UiSlo[];
  beforeAll(async () => {
    slos = await slothUiSlos(instant);
  });

  it('lists each objective with its Sloth labels, windows and period, one per environment', async () => {
    console.log(`Sloth UI lists: ${JSON.stringify(slos.map(({ id, windows }) => [id, windows]))}`);
    // Only production has series on day 21: staging starts on day 29.
    expect(slos.map((s) => s.slothId)).toEqual(
      OBJECTIVES.map((o) => `isa-monitor-${o.slo}`).sort(),
    );
    for (const { slo, objective } of OBJECTIVES) {
      const listed = slos.find((s) => s.slo === slo);
      expect(listed, slo).toMatchObject({
        // Split by environment: the base64url of "environment=production".
        id: `isa-monitor-${slo}:ZW52aXJvbm1lbnQ9cHJvZHVjdGlvbg==`,
        service: 'isa-monitor',
        objective,
        groupLabels: { environment: 'production' },
        windows: [...BURN_WINDOWS, '30d'],
        periodDays: 30,
        firingAlerts: [],
      });
    }
    const info = await instant('sloth_slo_info{sloth_id!=""}');
    for (const s of info) {
      expect(s.metric).toMatchObject({
        sloth_spec: 'prometheus/v1',
        sloth_mode: 'cli-gen-prom',
        sloth_version: 'isa-monitor',
      });
    }
  });

  it("reads every burn window's ratio within one event of the events' own count", async () => {
    const table: Array<[string, string, number, [number, number]]> = [];
    for (const { slo } of OBJECTIVES) {
      const labels = { environment: 'production', sloth_id: `isa-monitor-${slo}` };
      for (const w of BURN_WINDOWS) {
        const answer = await instant(availabilityQuery(`slo:sli_error:ratio_rate${w}`, labels));
        expect(answer, `${slo} ${w}`).toHaveLength(1);
        const ratio = 1 - Number(answer[0]?.value[1]);
        const [low, high] = ratioBounds(slo, minutesOf(w));
        table.push([slo, w, ratio, [low, high]]);
        expect(ratio, `${slo} ${w}`).toBeGreaterThanOrEqual(low - 1e-9);
        expect(ratio, `${slo} ${w}`).toBeLessThanOrEqual(high + 1e-9);
      }
    }
    console.log(`window ratios (UI, [hand low, high]): ${JSON.stringify(table)}`);
    // The outage is on: every 5-minute window is all bad, and the 3-day ones are not.
    expect(table.filter(([, w, r]) => w === '5m' && r === 1)).toHaveLength(3);
    expect(table.filter(([, w, r]) => w === '3d' && r > 0 && r < 0.01)).toHaveLength(3);
  });

  // The rules' period is the average of the 5-minute slices recorded until NOW, so the events of
  // the last 5 minutes weigh in only partly (an event counts in each of the 5 slices that hold
  // it, and the later slices are not there yet): the budget burned lies between what the report
  // counts until 5 minutes before NOW and until NOW, give or take the 0.005 by which the two
  // ways of counting differ (report.integration.test.ts).
  it('burns at 1 ÷ budget now, and has burned what isa-monitor report counts', async () => {
    const untilNow = await reportBudgets(month.url, T0, NOW);
    const untilBefore = await reportBudgets(month.url, T0, NOW - 300);
    const figures: unknown[] = [];
    for (const { slo, objective } of OBJECTIVES) {
      const listed = slos.find((s) => s.slo === slo);
      const [low, high] = ratioBounds(slo, 5);
      expect(listed?.burningCurrent, slo).toBeGreaterThanOrEqual(low / budgetOf(objective) - 1e-6);
      expect(listed?.burningCurrent, slo).toBeLessThanOrEqual(high / budgetOf(objective) + 1e-6);
      const before = 1 - (untilBefore.get(`production ${slo}`) ?? NaN);
      const now = 1 - (untilNow.get(`production ${slo}`) ?? NaN);
      expect(before, slo).toBeLessThan(now);
      expect(listed?.burnedPeriod, slo).toBeGreaterThan(before - 0.005);
      expect(listed?.burnedPeriod, slo).toBeLessThan(now + 0.005);
      figures.push([slo, listed?.burningCurrent, listed?.burnedPeriod, before, now]);
    }
    console.log(
      `burning now, burned (UI), burned (report until NOW-5m, NOW): ${JSON.stringify(figures)}`,
    );
  }, 300_000);

  it("draws each objective's availability chart over the last two hours", async () => {
    for (const listed of slos) {
      const window = chartWindow(listed.windows, 7200);
      expect(window).toBe('5m');
      const expr = availabilityQuery(`slo:sli_error:ratio_rate${window}`, {
        ...listed.groupLabels,
        sloth_id: listed.slothId,
      });
      const step = 300_000;
      const series = await queryPrometheusRange(month.url, expr, {
        startMs: (NOW - 7200) * 1000,
        endMs: NOW * 1000,
        stepMs: step,
      });
      const points = (series[0]?.values ?? []).map(([, v]) => Number(v) * 100);
      expect(points.length, listed.slo).toBeGreaterThan(20);
      // Good until the outage, then all bad.
      expect(Math.max(...points), listed.slo).toBe(100);
      expect(points.at(-1), listed.slo).toBe(0);
      // The budget-burn chart of the month so far reads the 2-hour ratio every 2 hours (recorded
      // here over the last minutes only, so its points are not checked).
      expect(chartWindow(listed.windows, NOW - T0)).toBe('2h');
    }
  });
});

/** How one dashboard query answered: its series count, `0` for none, or Prometheus's error. */
async function runPanel(expr: string, instantQuery: boolean): Promise<number | string> {
  try {
    if (instantQuery) return (await instant(expr)).length;
    const series = await queryPrometheusRange(month.url, expr, {
      startMs: (NOW - 6 * 3600) * 1000,
      endMs: NOW * 1000,
      stepMs: 60_000,
    });
    return series.filter((s) => s.values.length > 0).length;
  } catch (error) {
    return (error as Error).message.replace(/^.*?: /, '');
  }
}

describe("Sloth's Grafana dashboards 14643 and 14348 on the objectives' rules", () => {
  it("finds the service and the objectives in 14348's pickers", async () => {
    const labelValues = async (match: string, label: string) => {
      const params = new URLSearchParams({
        'match[]': match,
        start: String(NOW - 6 * 3600),
        end: String(NOW),
      });
      const res = await fetch(`${month.url}/api/v1/label/${label}/values?${params}`);
      return ((await res.json()) as { data: string[] }).data;
    };
    const { service, slo } = VARIABLE_QUERIES;
    expect(await labelValues(service.match, service.label)).toEqual(['isa-monitor']);
    const sloMatch = substitute(slo.match, { service: 'isa-monitor' });
    expect((await labelValues(sloMatch, slo.label)).sort()).toEqual(
      OBJECTIVES.map((o) => o.slo).sort(),
    );
  });

  it('answers every panel query, for each objective and SLI window', async () => {
    const rows: Array<[string, string, string]> = [];
    for (const query of DASHBOARD_QUERIES) {
      const answers: Array<number | string> = [];
      const windows = query.expr.includes('${sli_window}') ? SLI_WINDOWS : ['5m'];
      for (const { slo } of query.perObjective ? OBJECTIVES : OBJECTIVES.slice(0, 1)) {
        for (const sliWindow of windows) {
          const expr = substitute(query.expr, {
            service: 'isa-monitor',
            slo,
            sli_window: sliWindow,
            min_burning_rate: '1',
            // The month of the range's end: October.
            '__to:date:M': '10',
          });
          answers.push(await runPanel(expr, query.instant));
        }
      }
      rows.push([query.dashboard, query.panel, answers.join(' ')]);
    }
    console.log(
      ['dashboard | panel | series per objective (and window)']
        .concat(rows.map((r) => r.join(' | ')))
        .join('\n'),
    );
    expect(rows).toEqual(EXPECTED_PANELS);
    // 14643's first stats: three SLOs of one service.
    const [slosStat, servicesStat] = DASHBOARD_QUERIES;
    expect((await instant(slosStat?.expr ?? ''))[0]?.value[1]).toBe('3');
    expect((await instant(servicesStat?.expr ?? ''))[0]?.value[1]).toBe('1');
  }, 120_000);
});

/**
 * Pinned from a run: the series each panel query returns at NOW, per objective (and per SLI
 * window for the SLI panel). The alert stats return their `or vector(0)`: no alert fires in
 * backfilled data, whose rules promtool evaluates without alerts.
 */
const EXPECTED_PANELS: Array<[string, string, string]> = [
  ['14643', 'SLOs (stat)', '1'],
  ['14643', 'Services (stat)', '1'],
  ['14643', 'Avg burn rate (stat)', '1'],
  ['14643', 'Warning alerts (stat)', '1'],
  ['14643', 'Critical alerts (stat)', '1'],
  ['14643', 'All burning rate (filtered)', '3'],
  ['14643', 'Current exceeded burning rate SLOs', '3'],
  ['14643', 'SLOs burn rate state timeline', '3'],
  ['14643', 'Budget remaining 30 day window', '3'],
  ['14348', 'Exceeded burning rate SLOs', '3'],
  ['14348', 'All burning rate (filtered)', '3'],
  ['14348', 'Objective (stat)', '1 1 1'],
  ['14348', 'SLI (SLI per $sli_window)', Array<string>(24).fill('1').join(' ')],
  ['14348', 'SLI (objective line)', '1 1 1'],
  ['14348', 'Objective % (stat, sloth_slo_info)', '1 1 1'],
  ['14348', 'Current burning budget % (stat)', '1 1 1'],
  ['14348', 'Remaining error budget (month) (stat)', '1 1 1'],
  ['14348', 'Remaining error budget (30d window) (stat)', '1 1 1'],
  ['14348', 'Month error budget burn chart', '1 1 1'],
  ['14348', 'Month error budget burn chart (ideal consumption)', '1'],
  ['14348', 'Burn rate (speed) magnitude', '1 1 1'],
  ['14348', 'Warning alert (stat)', '1 1 1'],
  ['14348', 'Critical alert (stat)', '1 1 1'],
];
