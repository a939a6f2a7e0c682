/**
 * A real Prometheus (2.42, the Debian package) scrapes the app over loopback. Prometheus asks for
 * OpenMetrics first, so this proves the OpenMetrics output parses in the consumer that matters,
 * counter and histogram names included. Takes a few seconds: Prometheus scrapes its first target
 * about 5 s after start.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Recorder } from '../../src/metrics/recorder.js';
import { createServerApp } from '../../src/server/app.js';
import { StatusHistory } from '../../src/server/status.js';
import { lifecycleResult, pingResult, testMetrics } from '../metrics/fixtures.js';
import { serve, type Served } from './serve.js';
import { CHECK_LIST } from '../../src/checks/index.js';

const hasPrometheus = spawnSync('prometheus', ['--version']).status === 0;

let served: Served | undefined;
let prometheus: ChildProcess | undefined;
let dir: string | undefined;
let promUrl = '';
/** The Accept headers of the scrapes, recorded in front of the app. */
const scrapeAccepts: string[] = [];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function query(
  promql: string,
): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await res.json()) as { status: string; data: { result: [] }; error?: string };
  if (body.status !== 'success') throw new Error(`query ${promql}: ${body.error}`);
  return body.data.result;
}

beforeAll(async () => {
  if (!hasPrometheus) return;
  const metrics = testMetrics();
  const recorder = new Recorder(metrics);
  recorder.recordResult(pingResult('ok'));
  recorder.recordResult(pingResult('timeout'));
  recorder.recordResult(lifecycleResult('success'));
  const app = createServerApp({
    registry: metrics.registry,
    status: new StatusHistory({ checks: CHECK_LIST }),
    isReady: () => true,
  });
  const front = express();
  front.use((req, _res, next) => {
    if (req.path === '/metrics') scrapeAccepts.push(req.headers.accept ?? '');
    next();
  });
  front.use(app);
  served = await serve(front);
  const target = new URL(served.url).host;

  dir = mkdtempSync(join(tmpdir(), 'isa-prom-'));
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global: { scrape_interval: 1s, scrape_timeout: 1s }\nscrape_configs:\n  - job_name: isa-monitor\n    static_configs: [{ targets: ['${target}'] }]\n`,
  );
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: 'ignore' },
  );
}, 30_000);

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus?.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await served?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!hasPrometheus)('scraped by a real Prometheus', () => {
  it('is up and its counters and histograms arrive under their contract names', async () => {
    // Poll for the first successful scrape (short interval; no fixed sleep).
    let health = '';
    let lastError = '';
    for (let i = 0; i < 100 && health !== 'up'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      try {
        const res = await fetch(`${promUrl}/api/v1/targets`);
        const body = (await res.json()) as {
          data: { activeTargets: Array<{ health: string; lastError: string }> };
        };
        health = body.data.activeTargets[0]?.health ?? '';
        lastError = body.data.activeTargets[0]?.lastError ?? '';
      } catch {
        // Prometheus is still starting.
      }
    }
    expect(lastError).toBe('');
    expect(health).toBe('up');

    // Prometheus asked for OpenMetrics first, so these samples came through its OpenMetrics parser.
    expect(scrapeAccepts[0]).toMatch(/^application\/openmetrics-text/);
    const ok = await query('isa_ping_attempts_total{environment="production",result="ok"}');
    expect(ok.map((r) => r.value[1])).toEqual(['1']);
    const slow = await query('isa_ping_duration_seconds_bucket{environment="production",le="1"}');
    expect(slow.map((r) => r.value[1])).toEqual(['1']);
    const zero = await query('isa_lifecycle_runs_total{environment="sandbox",result="error"}');
    expect(zero.map((r) => r.value[1])).toEqual(['0']);
    // A counter must not arrive under its OpenMetrics family name without _total.
    expect(await query('isa_ping_attempts')).toEqual([]);
    const info = await query('isa_monitor_build_info');
    expect(info[0]?.metric.version).toBe('1.2.3');
  }, 30_000);
});
