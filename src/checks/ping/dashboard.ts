/**
 * The ping check's row of the overview dashboard (docs/dashboards.md, "Where the rows come from"):
 * dashboards/src/overview.ts finds `dashboardRows` by the check's name in the registry and places
 * the rows in registry order (service rows). Design-time only, like every `dashboard.ts`
 * (src/checks/shared/dashboard.ts): nothing the daemon runs imports it.
 */
import {
  LineInterpolation,
  ScaleDistribution,
  ScaleDistributionConfigBuilder,
  TooltipDisplayMode,
  VisibilityMode,
} from '@grafana/grafana-foundation-sdk/common';
import {
  HeatmapColorOptionsBuilder,
  HeatmapColorMode,
  HeatmapColorScale,
  YAxisConfigBuilder,
  CellValuesBuilder,
  HeatmapTooltipBuilder,
} from '@grafana/grafana-foundation-sdk/heatmap';
import {
  COLORS,
  countBarsPanel,
  fixedColor,
  heatmapPanel,
  linePanel,
  referenceLine,
  stateTimelinePanel,
  thresholds,
  valueMappings,
} from '../../dashboard-kit/panels.js';
import {
  VARIABLES,
  histogramMean,
  increase,
  select,
  selectHistogram,
} from '../../dashboard-kit/promql.js';
import type { CheckRow, CheckRows } from '../shared/dashboard.js';
import { LATENCY_CLASSES, pingCheck } from './index.js';

const { interval, rateInterval } = VARIABLES;
const BY_ENV = 'environment';
const { metrics } = pingCheck;

const CLASS_COLORS = [COLORS.good, COLORS.elevated, COLORS.warning, COLORS.bad] as const;

/** The ping's row: its latency, in detail. */
export const dashboardRows: CheckRows = () => [latencyRow()];

/**
 * `last ping slower than the threshold of <level>`, 0 or 1, matched per monitor: environment,
 * instance and location, since locations may share an instance (docs/alerts.md, "Joins: one
 * monitor's series").
 */
function slowerThan(level: 'expected' | 'warning' | 'critical'): string {
  return `(${select(metrics.pingLastDuration)} > bool on (environment, instance, location) ${select(metrics.latencyThreshold, { level })})`;
}

function latencyRow(): CheckRow {
  return {
    place: 'service',
    title: 'Ping latency',
    lines: [
      {
        height: 9,
        panels: [
          { panel: latencyPanel(), width: 14 },
          { panel: latencyDistributionPanel(), width: 10 },
        ],
      },
      { height: 5, panels: [{ panel: latencyClassPanel(), width: 24 }] },
      {
        height: 8,
        panels: [
          { panel: phasesPanel(), width: 12 },
          { panel: resultsPanel(), width: 12 },
        ],
      },
    ],
  };
}

/** Every ping's duration on a log scale, against the configured thresholds. */
function latencyPanel() {
  return linePanel({
    title: 'Ping latency and thresholds',
    description:
      'Duration of every ping (one a minute, held until the next) on a log scale, with the configured thresholds of each environment as dashed lines: green expected, orange warning, red critical. Timeouts show at their elapsed time. Compare with the event-loop lag in the last row: a busy monitor inflates what it measures.',
    unit: 's',
    queries: [
      {
        expr: `max by (${BY_ENV}) (${select(metrics.pingLastDuration)})`,
        legend: '{{environment}}',
      },
      {
        expr: `max by (${BY_ENV}, level) (${select(metrics.latencyThreshold)})`,
        legend: '{{environment}} {{level}} threshold',
      },
    ],
  })
    .lineInterpolation(LineInterpolation.StepAfter)
    .scaleDistribution(new ScaleDistributionConfigBuilder().type(ScaleDistribution.Log).log(10))
    .overrideByRegexp(' expected threshold$', referenceLine(COLORS.good))
    .overrideByRegexp(' warning threshold$', referenceLine(COLORS.warning))
    .overrideByRegexp(' critical threshold$', referenceLine(COLORS.bad));
}

/** How many pings fell into each latency bucket per time slot. */
function latencyDistributionPanel() {
  return heatmapPanel({
    title: 'Ping latency distribution',
    description:
      'How many pings fell into each latency bucket per time slot (buckets end exactly at 100 ms, 500 ms, 1 s and every configured threshold; none between 2.5 and 30 s). A band creeping upwards is a slow degradation; a second band is bimodal latency (some requests slow). Select a single environment: all selected environments are added together.',
    unit: 's',
    minInterval: '5m',
    queries: [
      {
        expr: `sum by (le) (${increase(selectHistogram(metrics.pingDuration, 'bucket'), interval)})`,
        legend: '{{le}}',
        format: 'heatmap',
      },
    ],
  })
    .color(
      new HeatmapColorOptionsBuilder()
        .mode(HeatmapColorMode.Scheme)
        .scheme('Oranges')
        .fill('dark-orange')
        .scale(HeatmapColorScale.Exponential)
        .exponent(0.5)
        .steps(64),
    )
    .yAxis(new YAxisConfigBuilder().unit('s').decimals(2))
    .cellValues(new CellValuesBuilder().unit('short').decimals(0))
    .tooltip(new HeatmapTooltipBuilder().mode(TooltipDisplayMode.Single).yHistogram(true))
    .showValue(VisibilityMode.Never);
}

/** The last ping's latency class over time. */
function latencyClassPanel() {
  return stateTimelinePanel({
    title: 'Latency class',
    description:
      'Class of the last ping over time, against the thresholds configured for each environment: expected (green), elevated (yellow, above the expected threshold), warning (orange) and critical (red). Long orange or red stretches are what the latency alerts fire on; isolated blips are not.',
    unit: 'none',
    queries: [
      {
        expr: `max by (${BY_ENV}) (${slowerThan('expected')} + ${slowerThan('warning')} + ${slowerThan('critical')})`,
        legend: '{{environment}}',
      },
    ],
  })
    .mappings(
      valueMappings(
        Object.fromEntries(
          LATENCY_CLASSES.map((name, index) => [
            String(index),
            [name, CLASS_COLORS[index] ?? COLORS.muted] as const,
          ]),
        ),
      ),
    )
    .thresholds(
      thresholds(COLORS.good, [
        [1, COLORS.elevated],
        [2, COLORS.warning],
        [3, COLORS.bad],
      ]),
    );
}

/** The mean time of each ping phase. */
function phasesPanel() {
  return linePanel({
    title: 'Ping phases (mean)',
    description:
      'Mean time of each ping phase: resolve (DNS, when a name is resolved), connect (TCP), tls (handshake), processing (request sent to first byte: the API working) and transfer (reading the body). Slow processing points at the API; slow resolve/connect/tls points at the network or at the monitor host.',
    unit: 's',
    minInterval: '5m',
    queries: [
      {
        expr: histogramMean(metrics.pingPhaseDuration, [BY_ENV, 'phase'], rateInterval),
        legend: '{{environment}} {{phase}}',
      },
    ],
  });
}

/** Pings per time slot by result. */
function resultsPanel() {
  return countBarsPanel({
    title: 'Pings by result',
    description:
      'Pings per time slot by result. server_error, timeout and network_error mean the API is down or unreachable (IsaApiDown); unauthorized means our API key is rejected (IsaCredentialsRejected); rate_limited means we got 429 (IsaApiRateLimited); unexpected_status and invalid_body mean the API answered something outside its contract.',
    unit: 'short',
    minInterval: '5m',
    queries: [
      {
        expr: `sum by (${BY_ENV}, result) (${increase(select(metrics.pingAttempts), interval)})`,
        legend: '{{environment}} {{result}}',
      },
    ],
  })
    .axisLabel('pings per slot')
    .overrideByRegexp(' ok$', fixedColor(COLORS.good));
}
