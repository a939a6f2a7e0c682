/**
 * Thin helpers over the Grafana Foundation SDK builders: every panel gets the `$datasource`
 * variable, a unit and a description, and a section/line layout assigns ids and grid positions
 * explicitly (the SDK's own auto-layout lets a panel overflow the 24-column grid).
 */
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import {
  AxisPlacement,
  BarAlignment,
  BigValueColorMode,
  BigValueGraphMode,
  BigValueTextMode,
  GraphDrawStyle,
  GraphThresholdsStyleConfigBuilder,
  GraphThresholdsStyleMode,
  LegendDisplayMode,
  LegendPlacement,
  LineInterpolation,
  ReduceDataOptionsBuilder,
  SortOrder,
  StackingConfigBuilder,
  StackingMode,
  TooltipDisplayMode,
  VisibilityMode,
  VizLegendOptionsBuilder,
  VizTooltipOptionsBuilder,
} from '@grafana/grafana-foundation-sdk/common';
import {
  type DashboardBuilder,
  type DataTransformerConfig,
  type DynamicConfigValue,
  FieldColorBuilder,
  FieldColorModeId,
  MappingType,
  type Panel,
  RowBuilder,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  type ValueMapping,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { PanelBuilder as HeatmapPanelBuilder } from '@grafana/grafana-foundation-sdk/heatmap';
import { DataqueryBuilder, PromQueryFormat } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatPanelBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as StateTimelinePanelBuilder } from '@grafana/grafana-foundation-sdk/statetimeline';
import { PanelBuilder as TablePanelBuilder } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';

/** Every panel, target, variable and annotation queries the data source picked in `$datasource`. */
export const DATASOURCE = { type: 'prometheus', uid: '${datasource}' } as const;

/** Grafana's named palette colours used for the latency classes and outcome colours. */
export const COLORS = {
  good: 'green',
  elevated: 'yellow',
  warning: 'orange',
  bad: 'red',
  neutral: 'blue',
  muted: 'text',
} as const;

/** One query of a panel. */
export interface QuerySpec {
  expr: string;
  /** Legend template, e.g. `{{environment}}`. */
  legend: string;
  /** Instant query (stat and table panels) instead of a range query. */
  instant?: boolean;
  format?: 'table' | 'heatmap';
}

/** What every panel must state. */
export interface PanelSpec {
  title: string;
  /** What the panel means to an on-call engineer and what to do about it. */
  description: string;
  /** A Grafana unit id (`s`, `percentunit`, `short`, `bytes`, `none`, `suffix:…`). */
  unit: string;
  queries: readonly QuerySpec[];
  /**
   * Panel minimum interval. Pings come once a minute, so windows shorter than a few minutes hold
   * zero or one sample; counter panels set this so `$__interval`/`$__rate_interval` stay wide.
   */
  minInterval?: string;
}

const REF_IDS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Builds the SDK query objects of a panel, with stable refIds A, B, … */
function targets(queries: readonly QuerySpec[]): DataqueryBuilder[] {
  return queries.map((query, index) => {
    const target = new DataqueryBuilder()
      .datasource(DATASOURCE)
      .refId(REF_IDS.charAt(index))
      .expr(query.expr)
      .legendFormat(query.legend);
    if (query.instant === true) target.instant();
    else target.range();
    if (query.format === 'table') target.format(PromQueryFormat.Table);
    if (query.format === 'heatmap') target.format(PromQueryFormat.Heatmap);
    return target;
  });
}

/** Applies the fields every panel kind shares. */
function common<
  B extends {
    title(t: string): B;
    description(d: string): B;
    unit(u: string): B;
    datasource(d: typeof DATASOURCE): B;
    targets(t: cog.Builder<cog.Dataquery>[]): B;
    interval(i: string): B;
  },
>(builder: B, spec: PanelSpec): B {
  builder
    .title(spec.title)
    .description(spec.description)
    .unit(spec.unit)
    .datasource(DATASOURCE)
    .targets(targets(spec.queries));
  if (spec.minInterval !== undefined) builder.interval(spec.minInterval);
  return builder;
}

/** Threshold steps: the base colour, then `[value, colour]` pairs in ascending order. */
export function thresholds(
  base: string,
  steps: ReadonlyArray<readonly [number, string]>,
): ThresholdsConfigBuilder {
  return new ThresholdsConfigBuilder()
    .mode(ThresholdsMode.Absolute)
    .steps([{ value: null, color: base }, ...steps.map(([value, color]) => ({ value, color }))]);
}

/** Value → text and colour mappings, e.g. `{ 0: ['DOWN', 'red'], 1: ['UP', 'green'] }`. */
export function valueMappings(
  map: Readonly<Record<string, readonly [text: string, color: string]>>,
): ValueMapping[] {
  const options: Record<string, { text: string; color: string; index: number }> = {};
  Object.entries(map).forEach(([value, [text, color]], index) => {
    options[value] = { text, color, index };
  });
  return [{ type: MappingType.ValueToText, options }];
}

/** Override properties giving series a fixed colour. */
export function fixedColor(color: string): DynamicConfigValue[] {
  return [{ id: 'color', value: { mode: FieldColorModeId.Fixed, fixedColor: color } }];
}

/** Override properties drawing a series as a thin dashed reference line. */
export function referenceLine(color: string): DynamicConfigValue[] {
  return [
    ...fixedColor(color),
    { id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } },
    { id: 'custom.lineWidth', value: 1 },
    { id: 'custom.fillOpacity', value: 0 },
    { id: 'custom.showPoints', value: VisibilityMode.Never },
  ];
}

/** A stat panel showing the last value of each series (instant queries). */
export function statPanel(spec: PanelSpec): StatPanelBuilder {
  return common(new StatPanelBuilder(), {
    ...spec,
    queries: spec.queries.map((query) => ({ ...query, instant: true })),
  })
    .reduceOptions(new ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
    .graphMode(BigValueGraphMode.None)
    .colorMode(BigValueColorMode.Background)
    .textMode(BigValueTextMode.ValueAndName)
    .colorScheme(new FieldColorBuilder().mode(FieldColorModeId.Thresholds));
}

function legendAndTooltip(
  builder: TimeseriesPanelBuilder,
  legendCalcs: readonly string[],
): TimeseriesPanelBuilder {
  const legend = new VizLegendOptionsBuilder()
    .showLegend(true)
    .placement(LegendPlacement.Bottom)
    .displayMode(legendCalcs.length > 0 ? LegendDisplayMode.Table : LegendDisplayMode.List)
    .calcs([...legendCalcs]);
  if (legendCalcs.length > 0)
    legend.sortBy(legendCalcs[0] === 'sum' ? 'Total' : 'Max').sortDesc(true);
  return builder
    .legend(legend)
    .tooltip(
      new VizTooltipOptionsBuilder()
        .mode(TooltipDisplayMode.Multi)
        .sort(SortOrder.Descending)
        .hideZeros(true),
    );
}

/** A line chart of gauges or per-second values. */
export function linePanel(spec: PanelSpec): TimeseriesPanelBuilder {
  return legendAndTooltip(common(new TimeseriesPanelBuilder(), spec), [])
    .drawStyle(GraphDrawStyle.Line)
    .lineWidth(1)
    .fillOpacity(10)
    .showPoints(VisibilityMode.Never)
    .lineInterpolation(LineInterpolation.Linear)
    .axisPlacement(AxisPlacement.Auto)
    .colorScheme(new FieldColorBuilder().mode(FieldColorModeId.PaletteClassic));
}

/**
 * Stacked bars of event counts per interval (`increase(...[$__interval])`). Every known label
 * combination is exported as 0, so the legend is a table sorted by total and zeros are hidden
 * from the tooltip.
 */
export function countBarsPanel(spec: PanelSpec): TimeseriesPanelBuilder {
  return legendAndTooltip(common(new TimeseriesPanelBuilder(), spec), ['sum'])
    .drawStyle(GraphDrawStyle.Bars)
    .barAlignment(BarAlignment.Before)
    .lineWidth(1)
    .fillOpacity(80)
    .showPoints(VisibilityMode.Never)
    .stacking(new StackingConfigBuilder().mode(StackingMode.Normal).group('A'))
    .min(0)
    .decimals(0)
    .colorScheme(new FieldColorBuilder().mode(FieldColorModeId.PaletteClassic));
}

/** Draws the panel's static thresholds as dashed lines (e.g. 30/45/90 s on time to qualify). */
export function dashedThresholds(): GraphThresholdsStyleConfigBuilder {
  return new GraphThresholdsStyleConfigBuilder().mode(GraphThresholdsStyleMode.Dashed);
}

/** A heatmap of a classic histogram's buckets (`format: heatmap`, buckets already counted). */
export function heatmapPanel(spec: PanelSpec): HeatmapPanelBuilder {
  return common(new HeatmapPanelBuilder(), spec).calculate(false);
}

/** A state timeline: one lane per series, coloured by value mappings. */
export function stateTimelinePanel(spec: PanelSpec): StateTimelinePanelBuilder {
  return common(new StateTimelinePanelBuilder(), spec)
    .showValue(VisibilityMode.Never)
    .mergeValues(true)
    .fillOpacity(80)
    .legend(
      new VizLegendOptionsBuilder()
        .showLegend(true)
        .placement(LegendPlacement.Bottom)
        .displayMode(LegendDisplayMode.List),
    )
    .colorScheme(new FieldColorBuilder().mode(FieldColorModeId.Thresholds));
}

/** A table of an instant query (`format: table`), with the given transformations. */
export function tablePanel(
  spec: PanelSpec,
  transformations: DataTransformerConfig[],
): TablePanelBuilder {
  return common(new TablePanelBuilder(), {
    ...spec,
    queries: spec.queries.map((query) => ({ ...query, instant: true, format: 'table' as const })),
  }).transformations(transformations);
}

/** Grafana transformation: hide, rename and order table columns. */
export function organizeColumns(
  exclude: readonly string[],
  rename: Readonly<Record<string, string>> = {},
): DataTransformerConfig {
  return {
    id: 'organize',
    options: {
      excludeByName: Object.fromEntries(exclude.map((name) => [name, true])),
      renameByName: rename,
    },
  };
}

/** Grafana transformation: keep only rows whose `field` is greater than `value`. */
export function keepRowsAbove(field: string, value: number): DataTransformerConfig {
  return {
    id: 'filterByValue',
    options: {
      type: 'include',
      match: 'any',
      filters: [{ fieldName: field, config: { id: 'greater', options: { value } } }],
    },
  };
}

/** Grafana transformation: sort table rows by a field, largest first. */
export function sortDescending(field: string): DataTransformerConfig {
  return { id: 'sortBy', options: { sort: [{ field, desc: true }] } };
}

/** A panel placed on a line of the grid, `width` of 24 columns. */
export interface Placed {
  panel: cog.Builder<Panel>;
  width: number;
}

/** One horizontal line of panels sharing a height. */
export interface Line {
  height: number;
  panels: readonly Placed[];
}

/** A titled row and the lines of panels under it. */
export interface Section {
  title: string;
  lines: readonly Line[];
}

const GRID_WIDTH = 24;

/**
 * Adds the sections to the dashboard: an expanded row per section followed by its panels at
 * explicit positions, with ids numbered 1, 2, … in reading order so they are stable across
 * regenerations (panel links and the sync test depend on that).
 */
export function addSections(builder: DashboardBuilder, sections: readonly Section[]): void {
  let y = 0;
  let id = 1;
  for (const section of sections) {
    builder.withRow(
      new RowBuilder(section.title).id(id++).gridPos({ x: 0, y, w: GRID_WIDTH, h: 1 }),
    );
    y += 1;
    for (const line of section.lines) {
      let x = 0;
      for (const { panel, width } of line.panels) {
        const built = panel.build();
        built.id = id++;
        built.gridPos = { x, y, w: width, h: line.height };
        x += width;
        if (x > GRID_WIDTH) {
          throw new Error(`line in row "${section.title}" is ${x} columns wide, more than 24`);
        }
        builder.withPanel({ build: () => built });
      }
      y += line.height;
    }
  }
}
