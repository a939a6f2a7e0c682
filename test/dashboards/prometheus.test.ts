/**
 * Runs every dashboard query against a real Prometheus. promtool only parses and type-checks;
 * vector matching (many-to-many, missing `on`) and empty results show only at evaluation time.
 * Prometheus scrapes an exposition built from src/metrics/definitions.ts with every known label
 * combination (what the daemon exports from start-up) plus prom-client's default metrics, under
 * the job name the dashboards expect. The end-to-end test does the same against the real daemon.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MetricDefinition } from '../../src/metrics/definitions.js';
import { METRICS } from '../../src/checks/index.js';
import { MONITOR_JOB } from '../../src/dashboard-kit/promql.js';
import { allDashboardQueries, interpolate } from '../../dashboards/src/queries.js';

const PROMETHEUS = process.env.PROMETHEUS ?? 'prometheus';
/** The shipped rules file, relative to the repository root (where the tests run). */
const RULES_FILE = 'alerts/isa-monitor.rules.yaml';
const ENVIRONMENTS = ['production', 'sandbox'];
/** Values for labels without a known set. */
const OPEN_LABELS: Record<string, string> = {
  service_data_set: '20240601',
  version: '0.0.0-test',
  revision: 'test',
  nodejs: process.version,
};
const THRESHOLDS: Record<string, number> = { expected: 0.1, warning: 0.5, critical: 1 };

/** Every label combination the daemon pre-initialises for a definition. */
function labelCombinations(definition: MetricDefinition): Array<Record<string, string>> {
  let combinations: Array<Record<string, string>> = [{}];
  for (const label of definition.labels) {
    const values =
      label === 'environment'
        ? ENVIRONMENTS
        : (definition.knownValues?.[label] ?? [OPEN_LABELS[label] ?? 'x']);
    combinations = combinations.flatMap((labels) =>
      values.map((value) => ({ ...labels, [label]: value })),
    );
  }
  return combinations;
}

/** A registry shaped like the daemon's; every scrape advances counters and histograms. */
function fakeDaemonRegistry(): { registry: Registry; advance: () => void } {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const updates: Array<() => void> = [];
  let scrape = 0;
  for (const definition of Object.values(METRICS) as MetricDefinition[]) {
    const config = {
      name: definition.name,
      help: definition.help,
      labelNames: [...definition.labels],
      registers: [registry],
    };
    const combinations = labelCombinations(definition);
    if (definition.type === 'counter') {
      const counter = new Counter(config);
      updates.push(() => combinations.forEach((labels) => counter.inc(labels)));
    } else if (definition.type === 'histogram') {
      const histogram = new Histogram({ ...config, buckets: [...(definition.buckets ?? [])] });
      updates.push(() =>
        combinations.forEach((labels) => histogram.observe(labels, 0.05 * (1 + (scrape % 40)))),
      );
    } else {
      const gauge = new Gauge(config);
      updates.push(() =>
        combinations.forEach((labels) => {
          const now = Date.now() / 1000;
          if (definition.name.endsWith('_timestamp_seconds')) gauge.set(labels, now);
          else if (definition.name === METRICS.latencyThreshold.name)
            gauge.set(labels, THRESHOLDS[labels.level ?? ''] ?? 1);
          else if (definition.name === METRICS.pingInterval.name) gauge.set(labels, 60);
          // Outside maintenance: the objectives leave windows out, so their panels would be empty.
          else if (definition.name === METRICS.maintenanceActive.name) gauge.set(labels, 0);
          else gauge.set(labels, (scrape % 3) / 2);
        }),
      );
    }
  }
  return {
    registry,
    advance: () => {
      scrape += 1;
      updates.forEach((update) => update());
    },
  };
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface QueryResponse {
  status: string;
  error?: string;
  data?: { resultType: string; result: unknown };
}

let exporter: http.Server | undefined;
let prometheus: ChildProcess | undefined;
let workDir = '';
let prometheusUrl = '';
let prometheusLog = '';

async function query(promql: string): Promise<QueryResponse> {
  const response = await fetch(
    `${prometheusUrl}/api/v1/query?${new URLSearchParams({ query: promql })}`,
  );
  return (await response.json()) as QueryResponse;
}

beforeAll(async () => {
  const version = spawnSync(PROMETHEUS, ['--version'], { encoding: 'utf8' });
  if (version.error !== undefined || version.status !== 0) {
    throw new Error(
      `prometheus is required to run the dashboard queries and was not found (${PROMETHEUS}). ` +
        'Install it: apt-get install -y --no-install-recommends prometheus ' +
        '(or set PROMETHEUS=/path/to/prometheus).',
    );
  }
  const { registry, advance } = fakeDaemonRegistry();
  exporter = http.createServer((_request, response) => {
    advance();
    registry.metrics().then(
      (text) => {
        response.setHeader('content-type', registry.contentType);
        response.end(text);
      },
      (err: unknown) => {
        response.statusCode = 500;
        response.end(String(err));
      },
    );
  });
  await new Promise<void>((resolve) => exporter?.listen(0, '127.0.0.1', resolve));
  const exporterPort = (exporter.address() as AddressInfo).port;

  workDir = mkdtempSync(path.join(tmpdir(), 'dashboard-prometheus-'));
  // An always-firing alert named like ours, so the alert annotation has something to show.
  writeFileSync(
    path.join(workDir, 'rules.yml'),
    JSON.stringify({
      groups: [
        {
          name: 'test',
          rules: [
            {
              alert: 'IsaTestAlwaysFiring',
              expr: 'vector(1)',
              labels: { environment: 'production', severity: 'warning' },
            },
          ],
        },
      ],
    }),
  );
  writeFileSync(
    path.join(workDir, 'prometheus.yml'),
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      // The shipped rules too: the objectives' panels read the series they record.
      rule_files: [path.join(workDir, 'rules.yml'), path.resolve(RULES_FILE)],
      scrape_configs: [
        { job_name: MONITOR_JOB, static_configs: [{ targets: [`127.0.0.1:${exporterPort}`] }] },
      ],
    }),
  );
  const port = await freePort();
  prometheusUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    PROMETHEUS,
    [
      `--config.file=${path.join(workDir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(workDir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  prometheus.stderr?.on('data', (chunk: Buffer) => {
    prometheusLog = (prometheusLog + chunk.toString()).slice(-4000);
  });

  // Wait (bounded) until a few scrapes are stored: rate() and increase() need two samples; and
  // until the shipped rules have recorded the objectives, which a loaded machine's Prometheus,
  // evaluating every rule each second, can take a minute to reach.
  const deadline = Date.now() + 90_000;
  for (;;) {
    const ready = await query(
      `count_over_time(up{job="${MONITOR_JOB}"}[1m]) >= 4 and on () count(slo:period_error_budget_remaining:ratio) > 0`,
    ).catch(() => undefined);
    const result = ready?.data?.result;
    if (Array.isArray(result) && result.length > 0) break;
    if (Date.now() > deadline)
      throw new Error(`Prometheus never scraped the exporter:\n${prometheusLog}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}, 120_000);

afterAll(async () => {
  prometheus?.kill('SIGTERM');
  await new Promise<void>((resolve) => {
    if (prometheus === undefined || prometheus.exitCode !== null) resolve();
    else prometheus.once('exit', () => resolve());
  });
  await new Promise<void>((resolve) => (exporter ? exporter.close(() => resolve()) : resolve()));
  if (workDir !== '') rmSync(workDir, { recursive: true, force: true });
});

describe('dashboard queries on a real Prometheus', () => {
  it('evaluate without error and return data (annotations may be empty)', async () => {
    const problems: string[] = [];
    for (const dashboardQuery of allDashboardQueries()) {
      const promql = interpolate(dashboardQuery.expr, {
        range: '1m',
        interval: '1m',
        rateInterval: '1m',
      });
      const response = await query(promql);
      const label = `${dashboardQuery.panel} ${dashboardQuery.refId ?? ''}`;
      if (response.status !== 'success') {
        problems.push(`${label}: ${response.error ?? 'failed'}\n  ${promql}`);
        continue;
      }
      const result = response.data?.result;
      const empty = Array.isArray(result) && result.length === 0;
      if (empty && !dashboardQuery.mayBeEmpty) problems.push(`${label}: no data\n  ${promql}`);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('reports a query that breaks vector matching (the check can fail)', async () => {
    // Two threshold series per environment on the right side: many-to-many, an evaluation error
    // promtool cannot see.
    const response = await query(
      `${METRICS.pingLastDuration.name} > on (environment) ${METRICS.latencyThreshold.name}`,
    );
    expect(response.status).toBe('error');
    expect(response.error).toMatch(/many-to-many|duplicate series/);
  });
});
