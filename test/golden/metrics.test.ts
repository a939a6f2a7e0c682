/**
 * The metric set is a contract: this golden file pins every isa_ metric family's type and the
 * label names of each of its samples (values stripped), as served on /metrics, and the name and
 * type of each process and Node.js family the daemon keeps of prom-client's defaults (their
 * samples depend on the runtime's state, so only the family is pinned). Any rename, label change
 * or new metric shows up as a diff here and must be a deliberate change of the golden file. The
 * families a check defines are pinned in its folder (`src/checks/<name>/metrics.golden.txt`), the
 * rest here, so a check removed with its folder takes its part of the set with it:
 *
 *   UPDATE_GOLDEN=1 npx vitest run test/golden
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Recorder } from '../../src/metrics/recorder.js';
import { createServerApp } from '../../src/server/app.js';
import { StatusHistory } from '../../src/server/status.js';
import { CHECK_FIXTURES, pingResult, sampleResults, testMetrics } from '../metrics/fixtures.js';
import { serve, type Served } from '../server/serve.js';
import { testEnvironment } from '../support/harness.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import type { AnyCheck } from '../../src/kernel/check.js';

const GOLDEN = fileURLToPath(new URL('./metrics.txt', import.meta.url));

/**
 * Reduces a Prometheus text exposition to `# TYPE name type` lines, each isa_ one followed by the
 * sorted, de-duplicated `sample{label,label}` signatures of its family; other families (process
 * and Node.js metrics) by their `# TYPE` line alone, after the isa_ ones.
 */
function metricSignatures(exposition: string): string {
  const types = new Map<string, string>();
  const samples = new Map<string, Set<string>>();
  let family = '';
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      family = type[1]!;
      types.set(family, type[2]!);
      samples.set(family, new Set());
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? /.exec(line);
    if (!sample) throw new Error(`unparsable exposition line: ${line}`);
    const labelNames = [
      ...(sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"/g),
    ]
      .map((m) => m[1]!)
      .sort();
    samples.get(family)?.add(`${sample[1]}{${labelNames.join(',')}}`);
  }
  const names = [...types.keys()].sort();
  const ours = names.filter((name) => name.startsWith('isa_'));
  const runtime = names.filter((name) => !name.startsWith('isa_'));
  return [
    ...ours.flatMap((name) => [
      `# TYPE ${name} ${types.get(name)}`,
      ...[...(samples.get(name) ?? [])].sort(),
    ]),
    ...runtime.map((name) => `# TYPE ${name} ${types.get(name)}`),
  ]
    .join('\n')
    .concat('\n');
}

/** The golden file of the families the check called `name` defines. */
function checkGolden(name: string): string {
  return fileURLToPath(new URL(`../../src/checks/${name}/metrics.golden.txt`, import.meta.url));
}

/**
 * The signatures split by owner: each check's families (by its metric definitions' names) to its
 * folder's golden file, every other family to test/golden/metrics.txt, each part in order.
 */
function goldenParts(signatures: string): Map<string, string> {
  const owner = new Map(
    (CHECK_LIST as readonly AnyCheck[]).flatMap((check) =>
      Object.values(check.metrics).map((definition) => [definition.name, check.name] as const),
    ),
  );
  const parts = new Map<string, string[]>([[GOLDEN, []]]);
  let file = GOLDEN;
  for (const line of signatures.trimEnd().split('\n')) {
    const family = /^# TYPE (\S+) /.exec(line)?.[1];
    if (family !== undefined) {
      const check = owner.get(family);
      file = check === undefined ? GOLDEN : checkGolden(check);
    }
    parts.set(file, [...(parts.get(file) ?? []), line]);
  }
  return new Map([...parts].map(([path, lines]) => [path, `${lines.join('\n')}\n`]));
}

let served: Served;
beforeAll(async () => {
  // The daemon's full set: prom-client's process and Node.js families too.
  const metrics = testMetrics(['production', 'sandbox'], { processMetrics: true });
  const recorder = new Recorder(metrics);
  const status = new StatusHistory({ checks: CHECK_LIST });
  for (const environment of ['production', 'sandbox']) {
    // The configuration gauges of the checks testMetrics leaves off (coverage's expectation,
    // analytics' lag bound): a family without a sample would pin no labels.
    recorder.describeEnvironment(
      testEnvironment('http://127.0.0.1:9', {
        name: environment,
        ...Object.fromEntries(CHECK_FIXTURES.map(({ check }) => [check, { enabled: true }])),
        // Described by testMetrics already.
        ping: { enabled: false },
        lifecycle: { enabled: false },
      }),
    );
    // Every registered check's sample results (its folder's fixtures.ts).
    for (const result of sampleResults(environment)) recorder.recordResult(result);
    // A confirmation sequence: a confirmation ping, its start and its end.
    recorder.recordFollowUp(environment, 'ping', { type: 'started' });
    recorder.recordResult({ ...pingResult('timeout', { environment }), followUp: true });
    recorder.recordFollowUp(environment, 'ping', { type: 'ended', end: 'window_elapsed' });
    recorder.recordSkip(environment, 'lifecycle', 'overlap');
    recorder.setSessionsOpen(environment, 1);
  }
  recorder.recordControlProbe('ok', 40);
  recorder.setContractDrift({
    environments: {
      production: {
        operations: { ping: { counts: { breaking: 0, warning: 1, info: 0 } } },
      },
    },
  } as unknown as Parameters<Recorder['setContractDrift']>[0]);
  served = await serve(
    createServerApp({ registry: metrics.registry, status, isReady: () => true }),
  );
});
afterAll(() => served.close());

describe('golden metric set', () => {
  it("matches test/golden/metrics.txt and each check's metrics.golden.txt (isa_ names, types and label names; runtime families)", async () => {
    const actual = metricSignatures(await (await fetch(`${served.url}/metrics`)).text());
    for (const [file, text] of goldenParts(actual)) {
      if (process.env.UPDATE_GOLDEN === '1') {
        writeFileSync(file, text);
        continue;
      }
      expect(existsSync(file), `${file} missing: run with UPDATE_GOLDEN=1`).toBe(true);
      // A plain string comparison, so the failure shows a line diff.
      expect(text, file).toBe(readFileSync(file, 'utf8'));
    }
  });

  it("records every registered check's fixtures", () => {
    const names = (CHECK_LIST as readonly AnyCheck[]).map((check) => check.name);
    expect(names).toEqual(expect.arrayContaining(['ping', 'lifecycle', 'tls']));
    expect(CHECK_FIXTURES.map((f) => f.check)).toEqual(names);
    for (const { check, fixtures } of CHECK_FIXTURES) {
      const results = fixtures.sampleResults('production');
      expect(results.length, check).toBeGreaterThan(0);
      expect(new Set(results.map((r) => r.check)), check).toEqual(new Set([check]));
    }
  });

  it('pins the labels of every family: each has at least one sample', async () => {
    const lines = metricSignatures(await (await fetch(`${served.url}/metrics`)).text())
      .trimEnd()
      .split('\n');
    const families = lines.filter((line) => line.startsWith('# TYPE isa_'));
    // An isa_ `# TYPE` line followed by another (or by nothing) is a family without samples.
    const bare = lines.filter(
      (line, i) =>
        line.startsWith('# TYPE isa_') && (lines[i + 1] ?? '# TYPE').startsWith('# TYPE '),
    );
    expect(families.length).toBeGreaterThanOrEqual(52);
    expect(bare).toEqual([]);
  });

  it('reduces an exposition to its signatures', () => {
    const text = [
      '# HELP isa_x_total Help.',
      '# TYPE isa_x_total counter',
      'isa_x_total{result="ok",environment="a"} 1',
      'isa_x_total{environment="b",result="odd \\"value\\", with comma"} 0',
      '# TYPE other_metric gauge',
      'other_metric 1',
      '# TYPE isa_h_seconds histogram',
      'isa_h_seconds_bucket{le="+Inf",environment="a"} 0',
      'isa_h_seconds_sum{environment="a"} 0',
      '',
    ].join('\n');
    expect(metricSignatures(text)).toBe(
      [
        '# TYPE isa_h_seconds histogram',
        'isa_h_seconds_bucket{environment,le}',
        'isa_h_seconds_sum{environment}',
        '# TYPE isa_x_total counter',
        'isa_x_total{environment,result}',
        '# TYPE other_metric gauge',
        '',
      ].join('\n'),
    );
  });
});
