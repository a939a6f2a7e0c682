/**
 * The dashboard side of a check (docs/dashboards.md, "Where the rows come from"): what a check's
 * folder gives the overview dashboard. A check with rows of its own has `dashboard.ts`, which
 * exports `dashboardRows` (a `CheckRows`); dashboards/src/overview.ts finds it by the check's name
 * in the registry and places the rows in registry order.
 *
 * A check's rows read its own metric definitions (its `index.ts`) and build panels with the
 * dashboard kit (`src/dashboard-kit/`: `panels.ts`, `promql.ts`) and the ones below; a metric
 * no check owns comes in as a parameter, since only the entry points and the generators may import
 * the registry (docs/architecture.md, "Layers").
 *
 * Design-time only: nothing the daemon runs imports this module or a `dashboard.ts`, so the bundle
 * (scripts/build.mjs, from src/cli.ts) leaves them and the Grafana SDK out.
 */
import type { MetricDefinition } from '../../kernel/metric-definition.js';
import { LineInterpolation } from '@grafana/grafana-foundation-sdk/common';
import {
  COLORS,
  countBarsPanel,
  fixedColor,
  linePanel,
  type Line,
  type PanelSpec,
  type Placed,
} from '../../dashboard-kit/panels.js';
import { VARIABLES, increase, select } from '../../dashboard-kit/promql.js';

/**
 * Where a check's row stands in the overview: `service` rows (how the API serves: pings, sessions,
 * reporting) come before the row of the API contract and responses, `reference` rows (what it
 * serves about the world and its own endpoint: the provider list, coverage, the certificate)
 * after it.
 */
export type RowPlace = 'service' | 'reference';

/** One row a check adds to the overview. */
export interface CheckRow {
  place: RowPlace;
  /**
   * The row's title. Rows of checks that follow each other in a place and have the same title are
   * one row: each line's panels side by side, in registry order (the provider list and coverage
   * share `REFERENCE_DATA_ROW`).
   */
  title: string;
  lines: readonly Line[];
}

/** Every metric of the build by key: the registry's `METRICS`, which overview.ts hands in. */
export type BuildMetrics = Readonly<Record<string, MetricDefinition>>;

/** What a check's `dashboard.ts` exports as `dashboardRows`. */
export type CheckRows = (metrics: BuildMetrics) => readonly CheckRow[];

/** The title of the row the reference-data checks (the provider list and coverage) share. */
export const REFERENCE_DATA_ROW = 'Reference data: provider list and coverage';

/**
 * One reference-data check's half of the row it shares (`REFERENCE_DATA_ROW`): its two panels side
 * by side, half the row's width, the other check's half beside them.
 */
export function referenceDataHalf(left: Placed['panel'], right: Placed['panel']): CheckRow {
  return {
    place: 'reference',
    title: REFERENCE_DATA_ROW,
    lines: [
      {
        height: 8,
        panels: [
          { panel: left, width: 6 },
          { panel: right, width: 6 },
        ],
      },
    ],
  };
}

/**
 * A whole number a check sets once a run and that holds until the next (providers listed, open
 * synthetic sessions), drawn in steps from 0: a line between two runs would show values no run
 * saw.
 */
export function heldCountPanel(spec: PanelSpec) {
  return linePanel(spec).lineInterpolation(LineInterpolation.StepAfter).decimals(0).min(0);
}

/**
 * The build's metric `key`, for a row that reads a metric no check owns (e.g. the synthetic
 * sessions open); a key the build does not have fails the generator instead of drawing an empty
 * panel.
 */
export function buildMetric(metrics: BuildMetrics, key: string): MetricDefinition {
  const definition = metrics[key];
  if (definition === undefined) throw new Error(`the build has no metric "${key}"`);
  return definition;
}

/**
 * A check's runs per time slot by result, from its runs counter (a `result` label), its one good
 * result green: how the lifecycle, analytics and coverage rows open.
 */
export function runsByResultPanel(spec: {
  title: string;
  description: string;
  minInterval: string;
  runs: MetricDefinition;
  good: string;
}) {
  return countBarsPanel({
    title: spec.title,
    description: spec.description,
    unit: 'short',
    minInterval: spec.minInterval,
    queries: [
      {
        expr: `sum by (environment, result) (${increase(select(spec.runs), VARIABLES.interval)})`,
        legend: '{{environment}} {{result}}',
      },
    ],
  })
    .axisLabel('runs per slot')
    .overrideByRegexp(` ${spec.good}$`, fixedColor(COLORS.good));
}
