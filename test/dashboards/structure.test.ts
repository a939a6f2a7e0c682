/**
 * Static checks standing in for Grafana, which cannot run here: stable uid, the `$datasource`
 * variable everywhere, a unit and a description on every panel, unique ids, a grid without
 * overlaps, and query windows that suit one ping a minute.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Dashboard, Panel } from '@grafana/grafana-foundation-sdk/dashboard';
import { describe, expect, it } from 'vitest';
import { METRICS } from '../../src/checks/index.js';
import { OVERVIEW_UID } from '../../dashboards/src/overview.js';
import { dashboardQueries, metricNamesIn, panelsOf, rowsOf } from '../../dashboards/src/queries.js';
import { committedDashboards } from './committed.js';
import { parseDuration } from '../../scripts/rules/durations.js';

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/** Seconds in a PromQL duration such as `5m`, `1h30m`, `30d`; throws on anything else. */
function durationSeconds(text: string): number {
  return parseDuration(text) / 1000;
}

/** Every value in a JSON tree, with its path, for "nothing anywhere may…" checks. */
function* walk(value: unknown, at = '$'): Generator<[string, unknown]> {
  yield [at, value];
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) yield* walk(item, `${at}[${index}]`);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) yield* walk(item, `${at}.${key}`);
  }
}

const overview = committedDashboards().find(({ dashboard }) => dashboard.uid === OVERVIEW_UID);

describe('overview dashboard identity', () => {
  it('is committed under its stable uid', () => {
    expect(overview?.file).toBe('isa-monitor-overview.json');
    expect(OVERVIEW_UID).toBe('isa-monitor-overview');
  });

  it('has the datasource, environment, location and instance variables', () => {
    const variables = overview?.dashboard.templating.list ?? [];
    expect(variables.map((variable) => variable.name)).toEqual([
      'datasource',
      'environment',
      'location',
      'instance',
    ]);
    const [datasource, environment, location, instance] = variables;
    // All must also match series without a location label (one unlabelled monitor).
    expect(location).toMatchObject({ type: 'query', includeAll: true, allValue: '.*' });
    expect(datasource).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(environment).toMatchObject({
      type: 'query',
      query: `label_values(${METRICS.pingUp.name}, environment)`,
      multi: true,
      includeAll: true,
      datasource: DATASOURCE,
    });
    expect(instance).toMatchObject({
      type: 'query',
      query: `label_values(${METRICS.buildInfo.name}, instance)`,
      datasource: DATASOURCE,
    });
  });

  it('shows the panel kinds the design asks for', () => {
    const panels = panelsOf(overview?.dashboard as Dashboard);
    const types = new Set(panels.map((panel) => panel.type));
    for (const type of ['stat', 'timeseries', 'heatmap', 'state-timeline', 'table']) {
      expect(types.has(type), type).toBe(true);
    }
    const exprs = dashboardQueries(overview?.dashboard as Dashboard).map((query) => query.expr);
    const uses = (text: string) => exprs.some((expr) => expr.includes(text));
    expect(uses(`${METRICS.pingDuration.name}_bucket`)).toBe(true);
    expect(uses(METRICS.latencyThreshold.name)).toBe(true);
    expect(uses('check="closed_session_gone"')).toBe(true);
    expect(uses(METRICS.measurementLag.name)).toBe(true);
    expect(uses('changes(process_start_time_seconds')).toBe(true);
    expect(uses(METRICS.pingInterval.name)).toBe(true);
    const annotations = overview?.dashboard.annotations.list ?? [];
    expect(annotations.map((annotation) => annotation.name)).toEqual([
      'Firing alerts',
      'Data set changes',
    ]);
    const heatmap = panels.find((panel) => panel.type === 'heatmap');
    expect(heatmap?.targets?.[0]).toMatchObject({ format: 'heatmap' });
  });
});

describe.each(committedDashboards())('dashboard $file', ({ dashboard }) => {
  const panels = panelsOf(dashboard);
  const rows = rowsOf(dashboard);

  it('queries only through the $datasource variable', () => {
    for (const panel of panels) {
      expect(panel.datasource, panel.title).toEqual(DATASOURCE);
      for (const target of panel.targets ?? []) {
        expect((target as { datasource?: unknown }).datasource, panel.title).toEqual(DATASOURCE);
      }
    }
    for (const annotation of dashboard.annotations.list ?? []) {
      expect(annotation.datasource, annotation.name).toEqual(DATASOURCE);
    }
    for (const variable of dashboard.templating.list ?? []) {
      if (variable.type === 'query') expect(variable.datasource, variable.name).toEqual(DATASOURCE);
    }
    // Nothing anywhere names a concrete data source uid.
    for (const [at, value] of walk(dashboard)) {
      if (at.endsWith('.datasource') && value !== null && typeof value === 'object') {
        expect((value as { uid?: unknown }).uid, at).toBe('${datasource}');
      }
    }
  });

  it('sets a unit, a title and a description on every panel', () => {
    expect(panels.length).toBeGreaterThan(0);
    for (const panel of panels) {
      expect(panel.title, `panel ${panel.id}`).toBeTruthy();
      expect(panel.fieldConfig?.defaults.unit, panel.title).toMatch(/\S/);
      expect(panel.description?.length ?? 0, panel.title).toBeGreaterThan(40);
    }
  });

  it('has unique panel ids and titles', () => {
    const ids = [...rows, ...panels].map((panel) => panel.id);
    expect(ids.every((id) => typeof id === 'number' && id > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const titles = panels.map((panel) => panel.title);
    expect(new Set(titles).size).toBe(titles.length);
  });

  it('lays panels out on the 24-column grid without overlaps', () => {
    const boxes = [...rows, ...panels].map((panel) => ({
      title: panel.title ?? '',
      ...(panel.gridPos ?? { x: -1, y: -1, w: 0, h: 0 }),
    }));
    for (const box of boxes) {
      expect(box.x, box.title).toBeGreaterThanOrEqual(0);
      expect(box.y, box.title).toBeGreaterThanOrEqual(0);
      expect(box.w, box.title).toBeGreaterThan(0);
      expect(box.h, box.title).toBeGreaterThan(0);
      expect(box.x + box.w, box.title).toBeLessThanOrEqual(24);
    }
    for (const [i, a] of boxes.entries()) {
      for (const b of boxes.slice(i + 1)) {
        const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
        expect(overlap, `"${a.title}" overlaps "${b.title}"`).toBe(false);
      }
    }
  });

  it('keeps expanded rows: their panels follow them at the top level', () => {
    // Grafana drops panels nested in a row that is not collapsed.
    for (const row of rows) {
      if (!row.collapsed) expect(row.panels, row.title).toEqual([]);
    }
  });

  it('filters every check metric by the environment and instance variables', () => {
    const withEnvironment = new Set<string>(
      Object.values(METRICS)
        .filter((definition) => (definition.labels as readonly string[]).includes('environment'))
        .map((definition) => definition.name),
    );
    for (const query of dashboardQueries(dashboard)) {
      if (query.kind === 'variable') continue;
      const ours = metricNamesIn(query.expr).filter((name) => name.startsWith('isa_'));
      if (ours.length === 0) continue;
      expect(query.expr, query.panel).toContain('instance=~"$instance"');
      const base = ours.map((name) => name.replace(/_(bucket|sum|count)$/, ''));
      if (base.some((name) => withEnvironment.has(name))) {
        expect(query.expr, query.panel).toContain('environment=~"$environment"');
      }
    }
  });

  it('uses windows of at least 5 minutes for the once-a-minute check metrics', () => {
    const byTitle = new Map<string, Panel>(panels.map((panel) => [panel.title ?? '', panel]));
    for (const query of dashboardQueries(dashboard)) {
      const checkMetric = metricNamesIn(query.expr).some((name) => name.startsWith('isa_'));
      if (!checkMetric) continue;
      for (const [, window] of query.expr.matchAll(/\[([^\]]+)\]/g)) {
        if (window === undefined) continue;
        if (window === '$__range') continue;
        if (window === '$__interval' || window === '$__rate_interval') {
          // Grafana's automatic interval can be 15 s; the panel's minimum interval keeps it wide.
          const minInterval = byTitle.get(query.panel)?.interval;
          expect(minInterval, `${query.panel} needs a minimum interval`).toBeDefined();
          expect(durationSeconds(minInterval ?? '0s'), query.panel).toBeGreaterThanOrEqual(300);
        } else {
          expect(durationSeconds(window), `${query.panel}: [${window}]`).toBeGreaterThanOrEqual(
            300,
          );
        }
      }
    }
  });

  it('gives every target a unique refId and a legend', () => {
    for (const panel of panels) {
      const targets = (panel.targets ?? []) as Array<{ refId?: string; legendFormat?: string }>;
      expect(targets.length, panel.title).toBeGreaterThan(0);
      const refIds = targets.map((target) => target.refId);
      expect(new Set(refIds).size, panel.title).toBe(refIds.length);
      for (const target of targets) expect(target.legendFormat, panel.title).toMatch(/\S/);
    }
  });
});

describe('dashboard sources', () => {
  const root = path.resolve(import.meta.dirname, '../..');
  // The overview and the dashboard kit its rows and the checks' rows are built with.
  const dashboardsSrc = ['dashboards/src', 'src/dashboard-kit'].flatMap((dir) =>
    readdirSync(path.join(root, dir))
      .filter((name) => name.endsWith('.ts'))
      .map((name) => `${dir}/${name}`),
  );
  // Each check's rows live in its folder (docs/dashboards.md, "Where the rows come from").
  const checkRows = readdirSync(path.join(root, 'src/checks'))
    .map((name) => `src/checks/${name}/dashboard.ts`)
    .filter((file) => existsSync(path.join(root, file)));

  it('include the rows of the checks that have them, and the dashboard kit', () => {
    expect(checkRows).toContain('src/checks/ping/dashboard.ts');
    expect(dashboardsSrc).toContain('src/dashboard-kit/promql.ts');
  });

  it('spell no isa_ metric name themselves: names come from the metric definitions', () => {
    for (const file of [...dashboardsSrc, ...checkRows]) {
      const source = readFileSync(path.join(root, file), 'utf8');
      expect(source.match(/\bisa_[a-z0-9_]+/g), file).toBeNull();
    }
  });
});

describe('durationSeconds (test helper)', () => {
  it('reads PromQL durations', () => {
    expect(durationSeconds('5m')).toBe(300);
    expect(durationSeconds('1h30m')).toBe(5400);
    expect(() => durationSeconds('$__range')).toThrow();
  });
});
