/**
 * Prometheus's own linter, `promtool check metrics`, on what `/metrics` serves: the daemon's real
 * metric set (process and Node.js metrics included) and a demo's, each while it carries data. It
 * must print nothing at all: no allowance for anybody's metrics (docs/metrics.md). promtool comes
 * from Debian's `prometheus` package, which scripts/test.sh installs; without it this test fails.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Recorder } from '../../src/metrics/recorder.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { createServerApp } from '../../src/server/app.js';
import { StatusHistory } from '../../src/server/status.js';
import { requireTool } from '../alerts/tools.js';
import { BUILD, environment, sampleResults } from '../metrics/fixtures.js';
import { eventually, metricSum, startDaemonProcess, type DaemonProcess } from '../support/cli.js';
import { serve, type Served } from './serve.js';
import { CHECK_LIST } from '../../src/checks/index.js';

/** `promtool check metrics` of `exposition`: its exit code and everything it printed. */
function checkMetrics(exposition: string): { status: number | null; output: string } {
  const run = spawnSync(requireTool('promtool'), ['check', 'metrics'], {
    input: exposition,
    encoding: 'utf8',
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

let served: Served;
beforeAll(async () => {
  // The daemon's real set: process and Node.js metrics included.
  const metrics = createMetrics({
    checks: CHECK_LIST,
    environments: [environment('production'), environment('sandbox')],
    build: BUILD,
  });
  const recorder = new Recorder(metrics);
  // Every registered check's sample results (its folder's fixtures.ts).
  for (const result of sampleResults('production')) recorder.recordResult(result);
  served = await serve(
    createServerApp({
      registry: metrics.registry,
      status: new StatusHistory({ checks: CHECK_LIST }),
      isReady: () => true,
    }),
  );
});
afterAll(() => served.close());

let demo: DaemonProcess | undefined;
afterEach(() => demo?.child.kill('SIGKILL'));

describe('promtool check metrics', () => {
  it('prints nothing for the daemon’s /metrics', async () => {
    const body = await (await fetch(`${served.url}/metrics`)).text();
    expect(checkMetrics(body)).toEqual({ status: 0, output: '' });
  });

  it('prints nothing for a demo’s /metrics once both environments have pinged', async () => {
    demo = startDaemonProcess(['--listen', '127.0.0.1:0']);
    const url = await demo.url;
    await eventually(
      async () =>
        (await metricSum(url, /^isa_ping_attempts_total\{environment="sandbox"/)) > 0 &&
        (await metricSum(url, /^isa_ping_attempts_total\{environment="production"/)) > 0,
      40_000,
      'pings in both demo environments',
    );
    const body = await (await fetch(`${url}/metrics`)).text();
    expect(body).toContain('# TYPE nodejs_active_handles gauge');
    expect(checkMetrics(body)).toEqual({ status: 0, output: '' });
  }, 60_000);

  it('would complain about a bad exposition (the check is live)', () => {
    const { status, output } = checkMetrics(
      '# HELP isa_bad_total x\n# TYPE isa_bad_total gauge\nisa_bad_total 1\n',
    );
    expect(output).toContain('isa_bad_total');
    expect(status).not.toBe(0);
  });
});
