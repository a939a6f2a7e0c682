/**
 * The objectives' rules, written from slo/isa-monitor.sloth.yaml (docs/alerts.md, "Objectives"):
 * Sloth's series (`slo:sli_error:ratio_rate<window>`, `slo:objective:ratio`,
 * `slo:error_budget:ratio`, `slo:period_error_budget_remaining:ratio`, with `sloth_id`,
 * `sloth_service`, `sloth_slo`, `sloth_window` and the spec's labels), and the
 * IsaSloErrorBudgetBurn tickets, as Sloth's own generator writes them: each burn-rate window is the
 * ratio of the SLI's counters over it, and the 30-day period is the average of the 5-minute
 * ratios. One difference: a 5-minute ratio whose slice touched a maintenance window is not
 * recorded, so the period, and the error budget read from it, leave those minutes out (docs/alerts.md,
 * "Objectives"). The burn-rate windows keep them, so a pair of windows is silent while its short
 * window holds a maintenance minute: a partner failing through its maintenance opens no ticket,
 * during it or after it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  SLO_SPEC_PATH,
  parseSloSpec,
  sloId,
  type Objective,
  type SloSpec,
} from '../../src/report/sloth-spec.js';
import {
  errorRatio,
  inMaintenance,
  overWindow,
  sliceErrorRatio,
} from '../../src/report/slo-queries.js';

export { SLO_SPEC_PATH, type Objective, type SloSpec };
export const SLO_GROUP = 'isa-monitor-slo';

/** The burn-rate alerts' windows (besides the 5-minute slices). */
const WINDOWS = ['30m', '1h', '2h', '6h', '1d', '3d'] as const;
export const PERIOD = '30d';

/**
 * Multiwindow burn-rate tickets (SRE Workbook, table 5-8, its ticket rows): a long and a short
 * window above the same burn rate. No page: at one ping a minute the fast pages
 * (IsaApiLatencyHigh, IsaApiDown) page sooner on a sharp outage (docs/alerts.md, "Objectives").
 */
export const BURN_WINDOWS = [
  { long: '6h', short: '30m', factor: 6 },
  { long: '1d', short: '2h', factor: 3 },
  { long: '3d', short: '6h', factor: 1 },
] as const;

/**
 * What `sloth_slo_info` says wrote the rules: the values Sloth's CLI gives a prometheus/v1 spec
 * (`sloth_mode`, `sloth_spec`), and this generator for the version (docs/alerts.md, "Objectives").
 */
export const SLOTH_INFO = {
  sloth_mode: 'cli-gen-prom',
  sloth_spec: 'prometheus/v1',
  sloth_version: 'isa-monitor',
} as const;

/**
 * Reads and checks the spec (src/report/sloth-spec.ts); every problem names its key. This
 * generator writes tickets only (the fast pages page sooner, docs/alerts.md, "Objectives"), so
 * each objective's page alert must be disabled.
 */
export function readSloSpec(root: string): SloSpec {
  const spec = parseSloSpec(readFileSync(join(root, SLO_SPEC_PATH), 'utf8'), SLO_SPEC_PATH);
  spec.slos.forEach((slo, i) => {
    if (!slo.alerting.pageAlert.disable) {
      throw new Error(
        `${SLO_SPEC_PATH}: slos[${i}].alerting.page_alert: must be disabled: the fast pages page (docs/alerts.md)`,
      );
    }
  });
  return spec;
}

/**
 * The fewest events a burn-rate window must hold before it may alert: enough that one bad event
 * alone stays under the burn rate (1 / N <= factor x budget). A young monitor, or one just
 * deployed, has long windows of a few events, where one failure reads as a burn of many times
 * the budget (docs/alerts.md, "Objectives").
 */
export function minimumEvents(factor: number, budget: number): number {
  return Math.ceil(1 / (factor * budget) - 1e-9);
}

/**
 * A YAML scalar as the repository's Prettier writes it (the rules file is checked by
 * `prettier --check`): plain when it is a simple word, else single-quoted.
 */
function yamlScalar(value: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9 ._-]*$/.test(value) &&
    !/^(true|false|null|yes|no|~)$/i.test(value) &&
    Number.isNaN(Number(value))
    ? value
    : `'${value.replaceAll("'", "''")}'`;
}

/** The error budget of `objective` (percent), as a ratio, without binary rounding noise. */
export function errorBudget(objective: Objective): number {
  return Number((1 - objective.objective / 100).toFixed(10));
}

/**
 * A burn-rate window alerts only with enough events in it; a raw SLI counts no events, so its
 * windows have no such floor.
 */
function enoughEvents(slo: Objective, window: string, minimum: number): string[] {
  if (slo.sli.kind === 'raw') return [];
  const total = overWindow(slo.sli.totalQuery, window);
  return ['  and on (environment)', `  ${total} >= ${minimum}`];
}

/** The rules fragment (a rules file of one group) for the spec. */
export function sloRulesFragment(spec: SloSpec): string {
  const lines: string[] = [
    `# Generated from ${SLO_SPEC_PATH} by scripts/rules/slo-rules.ts (docs/alerts.md, "Objectives").`,
    'groups:',
    `  - name: ${SLO_GROUP}`,
    '    rules:',
  ];
  const indent = (text: string, spaces: number) =>
    text
      .split('\n')
      .map((line) => `${' '.repeat(spaces)}${line}`)
      .join('\n');
  const labelLines = (labels: Record<string, string>) =>
    Object.entries(labels).map(([key, value]) => `          ${key}: ${yamlScalar(value)}`);
  for (const slo of spec.slos) {
    const id = sloId(spec, slo);
    const budget = errorBudget(slo);
    const common = {
      sloth_id: id,
      sloth_service: spec.service,
      sloth_slo: slo.name,
      ...spec.labels,
      ...slo.labels,
    };
    const selector = `{sloth_id="${id}"}`;
    const window = (w: string) => `slo:sli_error:ratio_rate${w}${selector}`;
    const record = (name: string, expr: string, labels: Record<string, string>, comment = '') => {
      if (comment) lines.push(...comment.split('\n').map((c) => `      # ${c}`));
      lines.push(`      - record: ${name}`, '        expr: |', indent(expr, 10), '        labels:');
      lines.push(...labelLines(labels));
    };
    lines.push(
      ...(slo === spec.slos[0] ? [] : ['']),
      `      # ---- ${slo.name}: ${slo.description} Objective ${slo.objective} % over ${PERIOD}. ----`,
    );
    record(
      'slo:sli_error:ratio_rate5m',
      sliceErrorRatio(slo),
      { ...common, sloth_window: '5m' },
      '5-minute slices with events, outside maintenance windows: what the period averages.',
    );
    for (const w of WINDOWS) {
      record(
        `slo:sli_error:ratio_rate${w}`,
        errorRatio(slo, w),
        { ...common, sloth_window: w },
        w === WINDOWS[0] ? 'The burn-rate windows, from the counters themselves.' : '',
      );
    }
    record(
      `slo:sli_error:ratio_rate${PERIOD}`,
      `max without (sloth_window) (avg_over_time(${window('5m')}[${PERIOD}]))`,
      { ...common, sloth_window: PERIOD },
      'The period: the average of its 5-minute slices, those in maintenance windows left out.',
    );
    const perEnvironment = `max without (sloth_window) (${window(PERIOD)})`;
    record('slo:objective:ratio', `0 * ${perEnvironment} + ${slo.objective / 100}`, common);
    record('slo:error_budget:ratio', `0 * ${perEnvironment} + ${budget}`, common);
    record('slo:time_period:days', `0 * ${perEnvironment} + ${parseInt(PERIOD, 10)}`, common);
    record(
      'slo:current_burn_rate:ratio',
      `max without (sloth_window) (${window('5m')}) / ${budget}`,
      common,
    );
    record('slo:period_burn_rate:ratio', `${perEnvironment} / ${budget}`, common);
    record(
      'slo:period_error_budget_remaining:ratio',
      `1 - slo:period_burn_rate:ratio${selector}`,
      common,
    );
    record('sloth_slo_info', 'vector(1)', {
      ...common,
      ...SLOTH_INFO,
      sloth_objective: String(slo.objective),
    });
    const burn = BURN_WINDOWS.map(({ long, short, factor }) =>
      [
        '(',
        `  max without (sloth_window) (${window(long)}) / ${budget} > ${factor}`,
        '  and',
        `  max without (sloth_window) (${window(short)}) / ${budget} > ${factor}`,
        ...enoughEvents(slo, long, minimumEvents(factor, budget)),
        '  unless on (environment)',
        `  ${inMaintenance(short)}`,
        ')',
      ].join('\n'),
    ).join('\nor\n');
    lines.push(
      `      - alert: ${slo.alerting.name}`,
      '        # Tickets only. A pair of windows is silent while its short window holds maintenance',
      '        # minutes, so a window neither opens a ticket nor leaves one behind; the value is the',
      '        # long window burn rate.',
      '        expr: |',
      indent(burn, 10),
      '        for: 5m',
      '        labels:',
      `          severity: ${slo.alerting.ticketAlert.labels['severity'] ?? 'warning'}`,
      `          sloth_slo: ${slo.name}`,
      '          sloth_severity: ticket',
      '        annotations:',
      `          summary: ${yamlScalar(slo.alerting.annotations['summary'] ?? '')}`,
      `          description: '${slo.name} of the {{ $labels.environment }} ISA API burns its ${String(Number((budget * 100).toFixed(6)))}% error budget {{ printf "%.1f" $value }} times faster than the ${slo.objective}% objective allows.'`,
      '          runbook_url: https://github.com/isa-monitor/isa-monitor/blob/main/docs/runbooks.md#isasloerrorbudgetburn',
    );
  }
  return `${lines.join('\n')}\n`;
}
