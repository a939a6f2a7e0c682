/**
 * The isa-monitor overview dashboard: what on-call opens first. Top to bottom: is each
 * environment answering and how fast, and from where; the checks' rows of how the API serves
 * (latency in detail, the session lifecycle and qualify behaviour, analytics); the API contract
 * and raw responses; the checks' rows of reference data and the certificate; the 99.5 % error
 * budget; the monitor itself. A row of one check lives in the check's folder
 * (`src/checks/<name>/dashboard.ts`); the rows here read several checks or the monitor
 * (docs/dashboards.md, "Where the rows come from").
 */
import {
  AnnotationQueryBuilder,
  DashboardBuilder,
  DashboardCursorSync,
  DatasourceVariableBuilder,
  type Dashboard,
  QueryVariableBuilder,
  VariableRefresh,
  VariableSort,
} from '@grafana/grafana-foundation-sdk/dashboard';
import {
  LineInterpolation,
  ScaleDistribution,
  ScaleDistributionConfigBuilder,
} from '@grafana/grafana-foundation-sdk/common';
import type { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CHECK_LIST, METRICS } from '../../src/checks/index.js';
import { PING_RESULTS, type PingResult } from '../../src/checks/ping/index.js';
import type { CheckRow, CheckRows, RowPlace } from '../../src/checks/shared/dashboard.js';
import type { AnyCheck } from '../../src/kernel/check.js';
import {
  COLORS,
  addSections,
  countBarsPanel,
  dashedThresholds,
  fixedColor,
  keepRowsAbove,
  linePanel,
  organizeColumns,
  sortDescending,
  stateTimelinePanel,
  statPanel,
  tablePanel,
  thresholds,
  valueMappings,
  DATASOURCE,
  type Section,
} from '../../src/dashboard-kit/panels.js';
import {
  RUNTIME_METRICS,
  VARIABLES,
  increase,
  rate,
  select,
  selectFiringAlerts,
  selectHistogram,
  selectMonitorUp,
  selectRuntime,
} from '../../src/dashboard-kit/promql.js';

/**
 * Each registered check's rows (`src/checks/<name>/dashboard.ts`, exporting `dashboardRows`; the
 * contract is src/checks/shared/dashboard.ts), found by the check's name in the registry, in
 * registry order; a check without one adds no row. Found by name rather than imported by its
 * `index.ts`, so that the daemon's bundle has no dashboard code (docs/dashboards.md, "Where the
 * rows come from").
 */
const CHECK_ROWS: readonly CheckRows[] = await Promise.all(
  (CHECK_LIST as readonly AnyCheck[])
    .map((check) => new URL(`../../src/checks/${check.name}/dashboard.ts`, import.meta.url))
    .filter((url) => existsSync(fileURLToPath(url)))
    .map(async (url) => ((await import(url.href)) as { dashboardRows: CheckRows }).dashboardRows),
);

/**
 * The checks' rows of one place, in registry order. Rows with the same title that follow each
 * other are one row, each line's panels side by side: the provider list and coverage share
 * theirs.
 */
function checkSections(rows: readonly CheckRow[], place: RowPlace): Section[] {
  const sections: Section[] = [];
  for (const { title, lines } of rows.filter((row) => row.place === place)) {
    const previous = sections.at(-1);
    if (previous?.title !== title) {
      sections.push({ title, lines });
      continue;
    }
    if (
      previous.lines.length !== lines.length ||
      previous.lines.some((line, index) => line.height !== lines[index]?.height)
    ) {
      throw new Error(`the checks' rows titled "${title}" have lines of different heights`);
    }
    sections[sections.length - 1] = {
      title,
      lines: previous.lines.map((line, index) => ({
        height: line.height,
        panels: [...line.panels, ...(lines[index]?.panels ?? [])],
      })),
    };
  }
  return sections;
}

/** Stable dashboard uid: links, bookmarks and alert annotations point at it. */
export const OVERVIEW_UID = 'isa-monitor-overview';

/** The ping availability objective (docs/alerts.md, `IsaApiErrorBudgetBurn`). */
export const AVAILABILITY_OBJECTIVE = 0.995;

/**
 * Ping results that spend the error budget: the API failed to give a valid answer. 401 and 429
 * are excluded (our credentials, our request rate: not the API being unavailable), as in
 * `IsaApiDown`; so is `ok`.
 */
export const BUDGET_BAD_RESULTS = PING_RESULTS.filter(
  (result: PingResult) => !['ok', 'unauthorized', 'rate_limited'].includes(result),
);

const { interval, rateInterval, range } = VARIABLES;
const BY_ENV = 'environment';

/** Static latency class boundaries (API guidance: expected < 100 ms, warning 500, critical 1000). */
const LATENCY_STEPS = [
  [0.1, COLORS.elevated],
  [0.5, COLORS.warning],
  [1, COLORS.bad],
] as const;

/** Windows of the burn-rate panel, as `[PromQL range, seconds]`. */
const BURN_WINDOWS = [
  ['1h', 3600],
  ['6h', 6 * 3600],
  ['1d', 86400],
  ['3d', 3 * 86400],
] as const;
const BUDGET_WINDOW = ['30d', 30 * 86400] as const;

/**
 * Share of expected pings that failed in a window, per environment: bad pings divided by the
 * number of pings the configured interval should have produced (window / interval). Gaps in the
 * monitor lower this ratio rather than inflating it (they have their own alerts); per monitor
 * (instance and location: locations may share an instance) first so two monitors do not
 * double-count, then the worst one.
 */
function failedShareOfExpected(window: string, seconds: number): string {
  const bad = increase(
    select(METRICS.pingAttempts, { result: { re: BUDGET_BAD_RESULTS } }),
    window,
  );
  const expected = `(${seconds} / max by (environment, instance, location) (${select(METRICS.pingInterval)}))`;
  return `max by (environment) (sum by (environment, instance, location) (${bad}) / ${expected})`;
}

function statusSection() {
  const pingUp = statPanel({
    title: 'Ping up',
    description:
      'Did the last ping of each environment get a valid 200 {message, timestamp}? DOWN means the API failed, timed out, rejected our key (401) or rate-limited us (429): see "Pings by result" for which. "No data" means the monitor is not being scraped: check the row "isa-monitor itself".',
    unit: 'none',
    queries: [
      { expr: `min by (${BY_ENV}) (${select(METRICS.pingUp)})`, legend: '{{environment}}' },
    ],
  })
    .mappings(valueMappings({ 0: ['DOWN', COLORS.bad], 1: ['UP', COLORS.good] }))
    .thresholds(thresholds(COLORS.bad, [[1, COLORS.good]]))
    .noValue('no data');

  const lastLatency = statPanel({
    title: 'Last ping latency',
    description:
      'Duration of the last GET /ping per environment. Colours follow the API guidance: green under 100 ms (expected), yellow above 100 ms (elevated), orange above 500 ms (warning), red above 1 s (critical). One slow ping is noise; the latency alerts need several of the last pings to be slow.',
    unit: 's',
    queries: [
      {
        expr: `max by (${BY_ENV}) (${select(METRICS.pingLastDuration)})`,
        legend: '{{environment}}',
      },
    ],
  }).thresholds(thresholds(COLORS.good, LATENCY_STEPS));

  const successShare = statPanel({
    title: 'Ping success (time range)',
    description:
      'Share of pings in the selected time range that got a valid answer. Below 99.5 % the month-long objective is at risk if it continues: see the error budget row.',
    unit: 'percentunit',
    queries: [
      {
        expr: `sum by (${BY_ENV}) (${increase(select(METRICS.pingAttempts, { result: 'ok' }), range)}) / sum by (${BY_ENV}) (${increase(select(METRICS.pingAttempts), range)})`,
        legend: '{{environment}}',
      },
    ],
  })
    .decimals(2)
    .thresholds(
      thresholds(COLORS.bad, [
        [0.99, COLORS.warning],
        [AVAILABILITY_OBJECTIVE, COLORS.good],
      ]),
    );

  const lifecycleAge = statPanel({
    title: 'Last successful lifecycle run',
    description:
      'Time since a synthetic session was last created, qualified, read and closed successfully. Runs come every few minutes; orange after 10 min, red after 15 min (IsaLifecycleFailing pages when at least two runs failed and none succeeded for 15 min in production). "never" means no success since the monitor started.',
    unit: 's',
    queries: [
      {
        expr: `time() - max by (${BY_ENV}) (${select(METRICS.lifecycleLastSuccess)} > 0)`,
        legend: '{{environment}}',
      },
    ],
  })
    .thresholds(
      thresholds(COLORS.good, [
        [600, COLORS.warning],
        [900, COLORS.bad],
      ]),
    )
    .noValue('never');

  const leakedSessions = statPanel({
    title: 'Synthetic sessions left open',
    description:
      'Sessions this monitor created and has not seen closed, taking the lowest value of the last 15 min so the session of a run in progress does not count. Above 0 means closing failed and test sessions are piling up at the API (IsaSyntheticSessionsLeaking).',
    unit: 'short',
    queries: [
      {
        expr: `max by (${BY_ENV}) (min_over_time(${select(METRICS.syntheticSessionsOpen)}[15m]))`,
        legend: '{{environment}}',
      },
    ],
  })
    .decimals(0)
    .thresholds(thresholds(COLORS.good, [[1, COLORS.warning]]));

  const firingAlerts = statPanel({
    title: 'Firing alerts',
    description:
      'Number of isa-monitor alerts firing now for the selected environments, including alerts about the monitor itself (Watchdog excluded). They are also drawn as red annotations on every graph; details in Alertmanager.',
    unit: 'short',
    queries: [{ expr: `count(${selectFiringAlerts()}) or vector(0)`, legend: 'firing' }],
  })
    .decimals(0)
    .thresholds(thresholds(COLORS.good, [[1, COLORS.bad]]));

  return {
    title: 'Status',
    lines: [
      {
        height: 5,
        panels: [
          { panel: pingUp, width: 4 },
          { panel: lastLatency, width: 4 },
          { panel: successShare, width: 4 },
          { panel: lifecycleAge, width: 4 },
          { panel: leakedSessions, width: 4 },
          { panel: firingAlerts, width: 4 },
        ],
      },
    ],
  };
}

/**
 * Per-location view: which vantage points see the problem. The paging rules page only when at
 * least min(2, locations reporting) agree, so this row is where on-call checks which do.
 */
function locationsSection() {
  const BY_LOC = `location, ${BY_ENV}`;
  const upByLocation = stateTimelinePanel({
    title: 'Last ping up, by location',
    description:
      "Whether the last scheduled ping of each environment succeeded, per location (the location label; a monitor without one shows as an empty location). A problem seen by one location only is that location's network or path, not the API: the pages wait for a second location to agree.",
    unit: 'short',
    queries: [
      {
        expr: `min by (${BY_LOC}) (${select(METRICS.pingUp)})`,
        legend: '{{location}} {{environment}}',
      },
    ],
  }).mappings(valueMappings({ 0: ['DOWN', COLORS.bad], 1: ['UP', COLORS.good] }));

  const latencyByLocation = linePanel({
    title: 'Ping latency, by location',
    description:
      'Duration of the last scheduled ping of each environment, per location. Lines that part are a problem between one location and the API.',
    unit: 's',
    queries: [
      {
        expr: `max by (${BY_LOC}) (${select(METRICS.pingLastDuration)})`,
        legend: '{{location}} {{environment}}',
      },
    ],
  }).lineInterpolation(LineInterpolation.StepAfter);

  // Where confirmation pings are off (the ping interval is 10 s or less, or `enabled: false`)
  // their families are absent: 0, like a healthy period, rather than no data.
  const zeroByLocation = `0 * max by (${BY_LOC}) (${select(METRICS.pingUp)})`;
  const confirmByLocation = countBarsPanel({
    title: 'Bad confirmation pings, by location',
    description:
      'Confirmation pings (sent every 10 s after a slow or failed scheduled ping) that were slow, timed out or failed, per location and environment. They are what makes the pages fast; in a healthy period there are none at all, and where confirmation is off (pings every 10 s or faster, or ping.confirm.enabled false) this stays at 0.',
    unit: 'short',
    minInterval: '5m',
    queries: [
      {
        expr: `sum by (${BY_LOC}) (increase(${select(METRICS.pingConfirmAttempts, { result: { re: ['server_error', 'timeout', 'network_error'] } })}[${rateInterval}])) or ${zeroByLocation}`,
        legend: '{{location}} {{environment}} failed',
      },
      {
        expr: `sum by (${BY_LOC}) (${select(METRICS.pingConfirmActive)}) or ${zeroByLocation}`,
        legend: '{{location}} {{environment}} sequence running',
      },
    ],
  });

  const control = stateTimelinePanel({
    title: 'Control probe, by location',
    description:
      "The optional control probe of each location (a plain GET of a neutral URL). While it fails, that location's own network is in doubt and it does not vote on pages. NONE: that monitor has no control probe configured.",
    unit: 'short',
    queries: [
      {
        expr: `min by (location, instance) (${select(METRICS.controlProbeSuccess)}) or on (location, instance) (-1 * max by (location, instance) (${select(METRICS.buildInfo)}))`,
        legend: '{{location}} {{instance}}',
      },
    ],
  }).mappings(
    valueMappings({
      '-1': ['NONE', COLORS.muted],
      0: ['FAILING', COLORS.bad],
      1: ['OK', COLORS.good],
    }),
  );

  return {
    title: 'Locations',
    lines: [
      {
        height: 7,
        panels: [
          { panel: upByLocation, width: 6 },
          { panel: latencyByLocation, width: 6 },
          { panel: confirmByLocation, width: 6 },
          { panel: control, width: 6 },
        ],
      },
    ],
  };
}

function contractSection() {
  // Contract results share one colour code: pass green, fail red, error (could not check) orange.
  const contractColors = (builder: TimeseriesPanelBuilder): TimeseriesPanelBuilder =>
    builder
      .overrideByRegexp(' pass$', fixedColor(COLORS.good))
      .overrideByRegexp(' fail$', fixedColor(COLORS.bad))
      .overrideByRegexp(' error$', fixedColor(COLORS.warning));

  const closedGone = contractColors(
    countBarsPanel({
      title: 'Closed session answers 410',
      description:
        'After closing its session, each run requests it again: the API must answer 410 Gone. fail means it answered something else (the session is not really closed: IsaClosedSessionNotGone after two in an hour); error means the check could not run (no answer).',
      unit: 'short',
      minInterval: '15m',
      queries: [
        {
          expr: `sum by (${BY_ENV}, result) (${increase(select(METRICS.contractChecks, { check: 'closed_session_gone' }), interval)})`,
          legend: '{{environment}} {{result}}',
        },
      ],
    }).axisLabel('checks per slot'),
  );

  const otherChecks = contractColors(
    countBarsPanel({
      title: 'Other contract checks',
      description:
        'response_schema: responses matched the documented shapes (every check but ping, whose bad bodies are its invalid_body result); session_token_header: session responses carried the session_token header. A fail means the API changed its contract: clients may break even while pings are green.',
      unit: 'short',
      minInterval: '15m',
      queries: [
        {
          expr: `sum by (${BY_ENV}, check, result) (${increase(select(METRICS.contractChecks, { check: { not: 'closed_session_gone' } }), interval)})`,
          legend: '{{environment}} {{check}} {{result}}',
        },
      ],
    }).axisLabel('checks per slot'),
  );

  const skipped = countBarsPanel({
    title: 'Skipped checks',
    description:
      'Scheduled runs that did not run: overlap (the previous run was still going), rate_limit_backoff (the API sent 429 and we are waiting out Retry-After), budget (our own request budget for the environment was spent). Skips leave gaps in every other panel.',
    unit: 'short',
    minInterval: '5m',
    queries: [
      {
        expr: `sum by (${BY_ENV}, check, reason) (${increase(select(METRICS.checksSkipped), interval)})`,
        legend: '{{environment}} {{check}} {{reason}}',
      },
    ],
  }).axisLabel('skips per slot');

  const responsesTable = tablePanel(
    {
      title: 'Responses by operation and code (time range)',
      description:
        'Every HTTP response the monitor received in the selected time range, by operation and status code; none means no response at all (timeout or network error). Start here to see which endpoint misbehaves and how.',
      unit: 'short',
      queries: [
        {
          expr: `sum by (${BY_ENV}, operation, code) (${increase(select(METRICS.httpResponses), range)})`,
          legend: '{{environment}} {{operation}} {{code}}',
        },
      ],
    },
    [
      keepRowsAbove('Value', 0.5),
      sortDescending('Value'),
      organizeColumns(['Time'], { Value: 'responses' }),
    ],
  ).decimals(0);

  const errorResponses = countBarsPanel({
    title: 'Non-2xx responses',
    description:
      'Responses other than 200/201 over time, by operation and code. 410 on verify_gone is expected (the closed-session check); 401 is our key, 429 is our rate, 5xx and none are the API or the network.',
    unit: 'short',
    minInterval: '5m',
    queries: [
      {
        expr: `sum by (${BY_ENV}, operation, code) (${increase(select(METRICS.httpResponses, { code: { nre: ['200', '201'] } }), interval)})`,
        legend: '{{environment}} {{operation}} {{code}}',
      },
    ],
  }).axisLabel('responses per slot');

  return {
    title: 'API contract and responses',
    lines: [
      {
        height: 8,
        panels: [
          { panel: closedGone, width: 8 },
          { panel: otherChecks, width: 8 },
          { panel: skipped, width: 8 },
        ],
      },
      {
        height: 9,
        panels: [
          { panel: responsesTable, width: 12 },
          { panel: errorResponses, width: 12 },
        ],
      },
    ],
  };
}

/**
 * What is left of an error budget: red once spent, amber in its last quarter. The 30-day ping
 * budget and every objective's read alike (docs/dashboards.md).
 */
function budgetRemainingThresholds() {
  return thresholds(COLORS.bad, [
    [0, COLORS.warning],
    [0.25, COLORS.good],
  ]);
}

/** The burn rates the tickets open at, 1×, 3× and 6× (docs/alerts.md, "Objectives"). */
function burnRateThresholds() {
  return thresholds(COLORS.good, [
    [1, COLORS.elevated],
    [3, COLORS.warning],
    [6, COLORS.bad],
  ]);
}

function errorBudgetSection() {
  const [budgetRange, budgetSeconds] = BUDGET_WINDOW;
  const budgetPercent = `${(AVAILABILITY_OBJECTIVE * 100).toFixed(1)} %`;
  const allowed = (1 - AVAILABILITY_OBJECTIVE).toFixed(3);
  const failedShare = failedShareOfExpected(budgetRange, budgetSeconds);

  const availability = statPanel({
    title: `Ping availability, ${budgetRange}`,
    description: `Share of the pings expected in the last ${budgetRange} (window / ping interval) that did not fail; failures are ${BUDGET_BAD_RESULTS.join(', ')}. Objective ${budgetPercent}. Pings the monitor never sent (monitor down) are not counted as failures: those gaps have their own alerts.`,
    unit: 'percentunit',
    queries: [{ expr: `1 - ${failedShare}`, legend: '{{environment}}' }],
  })
    .decimals(3)
    .thresholds(thresholds(COLORS.bad, [[AVAILABILITY_OBJECTIVE, COLORS.good]]));

  const remaining = statPanel({
    title: `Error budget remaining, ${budgetRange}`,
    description: `How much of the ${budgetRange} error budget (${allowed} of expected pings may fail for a ${budgetPercent} objective) is left. 100 % means no failed pings; 0 % or below means the objective is missed for this window.`,
    unit: 'percentunit',
    queries: [{ expr: `1 - ${failedShare} / ${allowed}`, legend: '{{environment}}' }],
  })
    .decimals(1)
    .thresholds(budgetRemainingThresholds());

  const burn = linePanel({
    title: 'Error budget burn rate',
    description: `How fast the budget is spent: failed share of expected pings divided by ${allowed}, over several windows. 1× spends exactly the budget in ${budgetRange}. IsaApiErrorBudgetBurn opens a ticket at 6× over 6h, 3× over 1d or 1× over 3d (each confirmed by a shorter window). Dashed lines: 1×, 3×, 6×.`,
    unit: 'suffix:×',
    queries: BURN_WINDOWS.map(([window, seconds]) => ({
      expr: `${failedShareOfExpected(window, seconds)} / ${allowed}`,
      legend: `{{environment}} ${window}`,
    })),
  })
    .thresholdsStyle(dashedThresholds())
    .thresholds(burnRateThresholds())
    .min(0)
    .axisSoftMax(7);

  return {
    title: `Error budget (${budgetPercent} ping availability)`,
    lines: [
      {
        height: 7,
        panels: [
          { panel: availability, width: 6 },
          { panel: remaining, width: 6 },
          { panel: burn, width: 12 },
        ],
      },
    ],
  };
}

/**
 * The objectives of slo/isa-monitor.sloth.yaml, from their generated rules (docs/alerts.md,
 * "Objectives"): what is left of each 30-day budget, how fast it burns, and when it burned.
 */
function objectivesSection() {
  const remaining = statPanel({
    title: 'Error budget remaining, 30 days, per objective',
    description:
      "What is left of each objective's 30-day error budget (slo:period_error_budget_remaining:ratio): 100 % untouched, 0 % spent, below 0 the objective is missed. Minutes inside maintenance windows are left out. Objectives: slo/isa-monitor.sloth.yaml.",
    unit: 'percentunit',
    queries: [
      {
        expr: 'slo:period_error_budget_remaining:ratio{sloth_service="isa-monitor"}',
        legend: '{{environment}} {{sloth_slo}}',
      },
    ],
  })
    .decimals(1)
    .thresholds(budgetRemainingThresholds());
  const burn = linePanel({
    title: 'Objective burn rate, 6 hours',
    description:
      'How fast each objective spends its budget over the last 6 hours: 1× spends it exactly in 30 days. IsaSloErrorBudgetBurn opens a ticket at 6× (with 30 minutes), 3× over a day or 1× over 3 days. Dashed lines: 1×, 3×, 6×.',
    unit: 'suffix:×',
    queries: [
      {
        expr: 'slo:sli_error:ratio_rate6h{sloth_service="isa-monitor"} / ignoring (sloth_window) slo:error_budget:ratio{sloth_service="isa-monitor"}',
        legend: '{{environment}} {{sloth_slo}}',
      },
    ],
  })
    .thresholdsStyle(dashedThresholds())
    .thresholds(burnRateThresholds())
    .min(0);
  const burned = linePanel({
    title: 'When the budget burned (hourly)',
    description:
      "Each objective's burn rate over each hour: the hours that spent the budget. Above 1×, an hour spent more than its share.",
    unit: 'suffix:×',
    queries: [
      {
        expr: 'slo:sli_error:ratio_rate1h{sloth_service="isa-monitor"} / ignoring (sloth_window) slo:error_budget:ratio{sloth_service="isa-monitor"}',
        legend: '{{environment}} {{sloth_slo}}',
      },
    ],
  }).min(0);
  return {
    title: 'Objectives (30 days, slo/isa-monitor.sloth.yaml)',
    lines: [
      {
        height: 7,
        panels: [
          { panel: remaining, width: 6 },
          { panel: burn, width: 9 },
          { panel: burned, width: 9 },
        ],
      },
    ],
  };
}

function monitorSection() {
  const monitorUp = statPanel({
    title: 'Monitor scraped',
    description:
      'Can Prometheus scrape the monitor (up{job="isa-monitor"})? DOWN pages as IsaMonitorDown after 5 min; no data at all means the target vanished from Prometheus (IsaMonitorAbsent). While the monitor is down, every other panel is blind.',
    unit: 'none',
    queries: [{ expr: selectMonitorUp(), legend: '{{instance}}' }],
  })
    .mappings(valueMappings({ 0: ['DOWN', COLORS.bad], 1: ['UP', COLORS.good] }))
    .thresholds(thresholds(COLORS.bad, [[1, COLORS.good]]))
    .noValue('absent');

  const restarts = statPanel({
    title: 'Monitor restarts (time range)',
    description:
      'How often the monitor process restarted in the selected time range (its start time changed). Restarts reset in-flight runs and can leave a synthetic session open; repeated restarts suggest a crash loop or memory limit: check the logs and the memory panel.',
    unit: 'short',
    queries: [
      {
        expr: `changes(${selectRuntime(RUNTIME_METRICS.startTime)}[${range}])`,
        legend: '{{instance}}',
      },
    ],
  })
    .decimals(0)
    .thresholds(thresholds(COLORS.good, [[1, COLORS.warning]]));

  const build = tablePanel(
    {
      title: 'Monitor build',
      description:
        'Version, source revision and Node.js version of each running monitor instance. Use it to tie a change in behaviour to a deployment.',
      unit: 'none',
      queries: [{ expr: select(METRICS.buildInfo), legend: '{{instance}}' }],
    },
    [organizeColumns(['Time', 'Value', '__name__'])],
  );

  const lastAttempt = linePanel({
    title: 'Time since last ping attempt',
    description:
      'Seconds since each environment was last pinged. It saws between 0 and the ping interval; above 300 s (dashed line) the schedule is stuck while /metrics still answers (IsaMonitorStalled). Restart the monitor and check its logs.',
    unit: 's',
    queries: [
      {
        expr: `time() - max by (${BY_ENV}) (${select(METRICS.pingLastAttempt)} > 0)`,
        legend: '{{environment}}',
      },
    ],
  })
    .thresholdsStyle(dashedThresholds())
    .thresholds(thresholds(COLORS.good, [[300, COLORS.bad]]))
    .min(0);

  const lag = linePanel({
    title: 'Event-loop lag next to ping latency',
    description:
      "The event-loop lag (p99) of the monitor's measurement thread beside the ping latency it measures, on one log scale. Every ping is timed on that thread's event loop, so when its lag rises together with latency the monitor (CPU starvation, GC) is inflating the numbers, not the API. The lag is sampled every 50 ms while an API call is in flight and not between calls, so it describes the moments the monitor measures; with no call in the window the line has a gap.",
    unit: 's',
    // Lag arrives in a batch per busy spell: a 5 m window holds at least one sample per check
    // run (every 50 ms of a run in flight), ten at 60 s pings in two environments.
    minInterval: '5m',
    queries: [
      {
        expr: `histogram_quantile(0.99, sum by (instance, le) (${rate(selectHistogram(METRICS.measurementLag, 'bucket'), rateInterval)}))`,
        legend: 'measurement lag p99 {{instance}}',
      },
      {
        expr: `max by (${BY_ENV}) (${select(METRICS.pingLastDuration)})`,
        legend: 'ping {{environment}}',
      },
    ],
  }).scaleDistribution(new ScaleDistributionConfigBuilder().type(ScaleDistribution.Log).log(10));

  const memory = linePanel({
    title: 'Monitor memory',
    description:
      'Resident memory of the monitor process and the used JavaScript heap. Steady growth over hours means a leak (for example response bodies not consumed); compare with the container memory limit.',
    unit: 'bytes',
    queries: [
      { expr: selectRuntime(RUNTIME_METRICS.residentMemory), legend: 'resident {{instance}}' },
      { expr: selectRuntime(RUNTIME_METRICS.heapUsed), legend: 'heap used {{instance}}' },
    ],
  }).min(0);

  const cpu = linePanel({
    title: 'Monitor CPU',
    description:
      'CPU used by the monitor process, as a share of one core. The monitor is mostly idle; sustained high CPU goes with event-loop lag and skewed latency measurements.',
    unit: 'percentunit',
    queries: [
      {
        expr: rate(selectRuntime(RUNTIME_METRICS.cpuSeconds), rateInterval),
        legend: '{{instance}}',
      },
    ],
  }).min(0);

  return {
    title: 'isa-monitor itself',
    lines: [
      {
        height: 5,
        panels: [
          { panel: monitorUp, width: 4 },
          { panel: restarts, width: 4 },
          { panel: build, width: 16 },
        ],
      },
      {
        height: 8,
        panels: [
          { panel: lag, width: 12 },
          { panel: lastAttempt, width: 12 },
        ],
      },
      {
        height: 8,
        panels: [
          { panel: memory, width: 12 },
          { panel: cpu, width: 12 },
        ],
      },
    ],
  };
}

/** Builds the overview dashboard as Grafana classic dashboard JSON (an object). */
export function buildOverviewDashboard(): Dashboard {
  const builder = new DashboardBuilder('isa-monitor overview')
    .uid(OVERVIEW_UID)
    .description(
      'Synthetic monitoring of the ISA API: ping latency and availability, the session lifecycle, the API contract, the error budget and the monitor itself. Generated from dashboards/src; do not edit in Grafana.',
    )
    .tags(['isa-monitor', 'synthetic-monitoring'])
    .timezone('browser')
    .tooltip(DashboardCursorSync.Crosshair)
    .time({ from: 'now-6h', to: 'now' })
    .refresh('1m')
    .withVariable(
      new DatasourceVariableBuilder('datasource')
        .label('Data source')
        .type('prometheus')
        .description('The Prometheus that scrapes isa-monitor.'),
    )
    .withVariable(
      new QueryVariableBuilder('environment')
        .label('Environment')
        .description('ISA API environments the monitor checks.')
        .datasource(DATASOURCE)
        .query(`label_values(${METRICS.pingUp.name}, environment)`)
        .definition(`label_values(${METRICS.pingUp.name}, environment)`)
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .sort(VariableSort.AlphabeticalAsc)
        .multi(true)
        .includeAll(true),
    )
    .withVariable(
      new QueryVariableBuilder('location')
        .label('Location')
        .description(
          'Where the monitors run (the location label, docs/deploy.md). All also shows series without one.',
        )
        .datasource(DATASOURCE)
        .query(`label_values(${METRICS.pingUp.name}, location)`)
        .definition(`label_values(${METRICS.pingUp.name}, location)`)
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .sort(VariableSort.AlphabeticalAsc)
        .multi(true)
        .includeAll(true)
        .allValue('.*'),
    )
    .withVariable(
      new QueryVariableBuilder('instance')
        .label('Monitor instance')
        .description('Running isa-monitor instances (vantage points).')
        .datasource(DATASOURCE)
        .query(`label_values(${METRICS.buildInfo.name}, instance)`)
        .definition(`label_values(${METRICS.buildInfo.name}, instance)`)
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .sort(VariableSort.AlphabeticalAsc)
        .multi(true)
        .includeAll(true),
    )
    .annotation(
      new AnnotationQueryBuilder()
        .name('Firing alerts')
        .datasource(DATASOURCE)
        .enable(true)
        .iconColor('red')
        .expr(selectFiringAlerts())
        .titleFormat('{{alertname}}')
        .textFormat('{{environment}} severity={{severity}}')
        .tagKeys('alertname,environment,severity')
        .step('60s'),
    )
    .annotation(
      new AnnotationQueryBuilder()
        .name('Data set changes')
        .datasource(DATASOURCE)
        .enable(true)
        .iconColor('blue')
        // A data set series that did not exist 5 minutes earlier: the offerings now come from a
        // new service_data_set (or the monitor just started and saw its first one).
        .expr(
          `${select(METRICS.serviceDataSet)} unless on (environment, instance, service_data_set) (${select(METRICS.serviceDataSet)} offset 5m)`,
        )
        .titleFormat('Data set {{service_data_set}}')
        .textFormat('{{environment}}: offerings now come from data set {{service_data_set}}')
        .tagKeys('environment,service_data_set')
        .step('60s'),
    );

  const checkRows = CHECK_ROWS.flatMap((rows) => rows(METRICS));
  addSections(builder, [
    statusSection(),
    locationsSection(),
    ...checkSections(checkRows, 'service'),
    contractSection(),
    ...checkSections(checkRows, 'reference'),
    errorBudgetSection(),
    objectivesSection(),
    monitorSection(),
  ]);
  return builder.build();
}
