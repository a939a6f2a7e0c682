import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Recorder } from '../../src/metrics/recorder.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { createServerApp } from '../../src/server/app.js';
import { StatusHistory } from '../../src/server/status.js';
import { BUILD, environment, lifecycleResult, pingResult } from '../metrics/fixtures.js';
import { serve, type Served } from './serve.js';

const hasPromtool = spawnSync('promtool', ['--version']).status === 0;

/**
 * prom-client's default metrics include gauges named `nodejs_active_*_total`, which promtool's
 * linter flags (a non-counter with a counter suffix). They are not ours to rename.
 */
const KNOWN_DEFAULT_METRIC_COMPLAINTS =
  /^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/;

let served: Served;
beforeAll(async () => {
  // The daemon's real set: process and Node.js metrics included.
  const metrics = createMetrics({
    environments: [environment('production'), environment('sandbox')],
    build: BUILD,
  });
  const recorder = new Recorder(metrics);
  for (const kind of ['ok', 'timeout', 'unauthorized', 'teapot'] as const) {
    recorder.recordResult(pingResult(kind));
  }
  for (const kind of ['success', 'qualify_timeout', 'not_gone_after_close'] as const) {
    recorder.recordResult(lifecycleResult(kind));
  }
  served = await serve(
    createServerApp({
      registry: metrics.registry,
      status: new StatusHistory(),
      isReady: () => true,
    }),
  );
});
afterAll(() => served.close());

describe.skipIf(!hasPromtool)('promtool check metrics', () => {
  it('finds nothing to complain about in /metrics apart from prom-client default gauges', async () => {
    const body = await (await fetch(`${served.url}/metrics`)).text();
    const run = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
    const problems = `${run.stdout}\n${run.stderr}`
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !KNOWN_DEFAULT_METRIC_COMPLAINTS.test(l));
    expect(problems).toEqual([]);
    // promtool exits 0 when clean and 3 on lint problems; anything else is a parse failure.
    expect([0, 3]).toContain(run.status);
  });

  it('would complain about a bad exposition (the check is live)', () => {
    const run = spawnSync('promtool', ['check', 'metrics'], {
      input: '# HELP isa_bad_total x\n# TYPE isa_bad_total gauge\nisa_bad_total 1\n',
      encoding: 'utf8',
    });
    expect(`${run.stdout}${run.stderr}`).toContain('isa_bad_total');
  });
});
