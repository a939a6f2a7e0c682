/**
 * Compiles every dashboard query with the real Prometheus parser and type checker: the queries
 * become recording rules in a throwaway file and `promtool check rules` must accept them. This
 * catches what Grafana would only show as a red panel: syntax errors, `rate()` of an instant
 * vector, mismatched vector matching.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DashboardQuery,
  dashboardQueries,
  interpolate,
} from '../../dashboards/src/queries.js';
import { committedDashboards } from './committed.js';

const PROMTOOL = process.env.PROMTOOL ?? 'promtool';

let workDir = '';

beforeAll(() => {
  const version = spawnSync(PROMTOOL, ['--version'], { encoding: 'utf8' });
  if (version.error !== undefined || version.status !== 0) {
    throw new Error(
      `promtool is required to check the dashboard queries and was not found (${PROMTOOL}). ` +
        'Install it: apt-get install -y --no-install-recommends prometheus ' +
        '(or set PROMTOOL=/path/to/promtool).',
    );
  }
  workDir = mkdtempSync(path.join(tmpdir(), 'dashboard-promtool-'));
});

afterAll(() => {
  if (workDir !== '') rmSync(workDir, { recursive: true, force: true });
});

interface PromtoolResult {
  status: number | null;
  output: string;
  /** Failing queries, found through the rule numbers promtool reports. */
  failing: Array<{ query: DashboardQuery; message: string }>;
}

/** Writes the queries as recording rules (JSON is YAML) and runs `promtool check rules`. */
function checkRules(queries: readonly DashboardQuery[], name: string): PromtoolResult {
  const file = path.join(workDir, `${name}.rules.json`);
  const rules = queries.map((query, index) => ({
    record: `dashboard:query_${index + 1}`,
    expr: interpolate(query.expr),
  }));
  writeFileSync(file, JSON.stringify({ groups: [{ name, rules }] }, null, 2));
  const run = spawnSync(PROMTOOL, ['check', 'rules', file], { encoding: 'utf8' });
  const output = `${run.stdout}${run.stderr}`;
  const failing = [...output.matchAll(/rule (\d+), "[^"]*": (.*)/g)].flatMap((match) => {
    const query = queries[Number(match[1]) - 1];
    return query === undefined ? [] : [{ query, message: match[2] ?? '' }];
  });
  return { status: run.status, output, failing };
}

describe('dashboard queries compiled by promtool', () => {
  for (const { file, dashboard } of committedDashboards()) {
    it(`accepts every panel, annotation and variable query of ${file}`, () => {
      const queries = dashboardQueries(dashboard);
      expect(queries.length).toBeGreaterThan(0);
      const result = checkRules(queries, path.basename(file, '.json'));
      const report = result.failing
        .map(
          ({ query, message }) =>
            `${query.panel} ${query.refId ?? ''}: ${message}\n  ${query.expr}`,
        )
        .join('\n');
      expect(result.status, `promtool rejected queries:\n${report || result.output}`).toBe(0);
      expect(result.output).toContain(`SUCCESS: ${queries.length} rules found`);
    });

    it(`has no query of ${file} that returns a range vector`, () => {
      // promtool accepts a bare range selector as a rule expression; Grafana cannot plot one.
      for (const query of dashboardQueries(dashboard)) {
        expect(interpolate(query.expr).trim(), `${query.panel}: ${query.expr}`).not.toMatch(/\]$/);
      }
    });
  }

  it('rejects a query that rate()s an instant vector, naming the panel', () => {
    const broken: DashboardQuery = {
      dashboard: 'test',
      panel: 'Broken panel',
      expr: 'sum(rate(isa_ping_attempts_total{environment=~"$environment"}))',
      kind: 'panel',
      refId: 'A',
      mayBeEmpty: false,
    };
    const good: DashboardQuery = { ...broken, panel: 'Good panel', expr: 'vector(1)' };
    const result = checkRules([good, broken], 'negative');
    expect(result.status).not.toBe(0);
    expect(result.failing.map(({ query }) => query.panel)).toEqual(['Broken panel']);
    expect(result.failing[0]?.message).toMatch(/expected type range vector/);
  });
});
