/**
 * Where the bytes and the time of `/metrics` go at N environments: the daemon's registry (built by
 * `createMetrics` from a validated configuration, zero-initialised as the daemon does it, each
 * environment's configuration gauges and follow-up families set up by `Recorder.describeEnvironment`
 * and one ping recorded), rendered in one process by prom-client's own `registry.metrics()`
 * and by the server's `MetricsRenderer`, alternately, so that both see the same machine. A quarter
 * of the environments records a new ping before each render, as between two 15 s scrapes at 60 s
 * pings.
 *
 * Usage: npx tsx bench/exposition.ts [--environments 1000] [--rounds 9] [--checks ping]
 *          [--pings 1]          (pings recorded per environment first: 1440 is a day at 60 s,
 *                                whose counters have more digits than a fresh start's)
 *          [--confirm on|off]   (confirmation pings; on, the default at 60 s pings)
 *          [--base-url URL]     (every environment's; its scheme and host decide the phase series:
 *                                https://api.example.com is the real API's shape)
 */
import { parseArgs } from 'node:util';
import { gzipSync, constants } from 'node:zlib';
import type { CheckResult } from '../src/kernel/check.js';
import { CHECK_LIST, CHECK_NAMES } from '../src/checks/index.js';
import { validateConfigDocument } from '../src/config/index.js';
import { Recorder } from '../src/metrics/recorder.js';
import { createMetrics, metricsEnvironmentOf } from '../src/metrics/registry.js';
import { MetricsRenderer } from '../src/server/exposition.js';
import { requestPhases, type Phase } from '../src/kernel/vocabulary.js';
import { toMicroseconds } from '../test/support/microseconds.js';
import { median } from './stats.js';

const { values } = parseArgs({
  options: {
    environments: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '9' },
    pings: { type: 'string', default: '1' },
    checks: { type: 'string', default: 'ping' },
    confirm: { type: 'string', default: 'on' },
    'base-url': { type: 'string', default: 'http://127.0.0.1:9' },
  },
});
const n = Number(values.environments);
const rounds = Number(values.rounds);
const checks = (values.checks ?? 'ping').split(',');
for (const check of checks) {
  if (!(CHECK_NAMES as readonly string[]).includes(check))
    throw new Error(`no such check: ${check}`);
}

if (values.confirm !== 'on' && values.confirm !== 'off') throw new Error('--confirm on|off');
const confirm = values.confirm === 'on';

/** One environment's section: the daemon's defaults (`{}` where not listed), only `checks` enabled. */
const SECTIONS: Record<string, object> = {
  ping: { interval: '60s', confirm: { enabled: confirm } },
  lifecycle: { addresses: [{ street1: '123 Main St', zip: '80202' }] },
  analytics: { enabled: true },
};
const names = Array.from({ length: n }, (_, i) => `env-${i}`);
const loaded = validateConfigDocument(
  {
    environments: names.map((name) => ({
      name,
      base_url: values['base-url'],
      api_key_env: 'BENCH_KEY',
      ...Object.fromEntries(
        CHECK_NAMES.map((check) => [
          check,
          checks.includes(check) ? (SECTIONS[check] ?? {}) : { enabled: false },
        ]),
      ),
    })),
  },
  { checks: CHECK_LIST, env: { BENCH_KEY: 'bench-key-0123456789abcdef' } },
);
if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
const metrics = createMetrics({
  checks: CHECK_LIST,
  environments: loaded.config.environments.map((env) => metricsEnvironmentOf(env, CHECK_LIST)),
  build: { version: '0.0.0', revision: 'bench', nodejs: process.version },
});
const recorder = new Recorder(metrics);
for (const environment of loaded.config.environments) recorder.describeEnvironment(environment);
/** A ping's phases where the base URL has them (a name's `resolve`, https's `tls`). */
const phases = requestPhases(values['base-url'] ?? '');
const PHASE_MS: Partial<Record<Phase, number>> = {
  resolve: 0.6,
  connect: 1.2,
  tls: 3.1,
  transfer: 0.4,
};
let pingsRecorded = 0;
function ping(environment: string): void {
  // Fractions of a millisecond, as clock readings give them (their sums carry binary noise).
  const fraction = (pingsRecorded * 0.618_033_988_749) % 1;
  const durationMs = 40 + (pingsRecorded++ % 50) + fraction;
  const result: CheckResult = {
    check: 'ping',
    environment,
    outcome: 'pass',
    reason: null,
    summary: { latency_class: 'expected', connection: 'opened' },
    startedAt: Date.now(),
    durationMs,
    steps: [],
    facts: {
      result: 'ok',
      durationMs,
      phases: Object.fromEntries(
        phases.map((phase) => [phase, (PHASE_MS[phase] ?? durationMs - 2) + fraction / 10]),
      ),
      connectionOpened: true,
      up: true,
      latencyClass: 'expected',
    },
    responses: [{ operation: 'ping', code: '200' }],
    // A ping counts no contract check: its body is its own result (invalid_body).
    contractChecks: [],
  };
  recorder.recordResult(result);
}
const pingsFirst = Number(values.pings);
if (!(Number.isInteger(pingsFirst) && pingsFirst >= 1))
  throw new Error('--pings: a whole number ≥ 1');
for (let i = 0; i < pingsFirst; i++) for (const name of names) ping(name);

/** The monitor's own samples; values in seconds to the microsecond, as the renderer writes them. */
const own = (exposition: string) =>
  toMicroseconds(exposition)
    .split('\n')
    .filter((line) => line.includes('isa_'))
    .join('\n');
const renderer = new MetricsRenderer(metrics.registry);
const times = { promClient: [] as number[], renderer: [] as number[], first: 0 };
let text = '';
{
  const began = performance.now();
  text = await renderer.render('prometheus');
  times.first = performance.now() - began;
}
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < n / 4; i++) ping(names[(round * n) / 4 + (i % n)] ?? names[i % n]!);
  let began = performance.now();
  const reference = await metrics.registry.metrics();
  times.promClient.push(performance.now() - began);
  began = performance.now();
  text = await renderer.render('prometheus');
  times.renderer.push(performance.now() - began);
  // The process metrics move between the two renders; the monitor's own must be equal.
  if (own(reference) !== own(text)) throw new Error('the renderer and prom-client disagree');
}

const samples = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
const perFamily = new Map<string, { samples: number; bytes: number }>();
for (const line of samples) {
  const family = line.split(/[{ ]/)[0]!.replace(/_(bucket|sum|count)$/, '');
  const entry = perFamily.get(family) ?? { samples: 0, bytes: 0 };
  entry.samples++;
  entry.bytes += line.length + 1;
  perFamily.set(family, entry);
}
const zipped = { fast: 0, fastMs: 0, default: 0, defaultMs: 0 };
{
  let began = performance.now();
  zipped.fast = gzipSync(text, { level: constants.Z_BEST_SPEED }).length;
  zipped.fastMs = performance.now() - began;
  began = performance.now();
  zipped.default = gzipSync(text).length;
  zipped.defaultMs = performance.now() - began;
}

const out = (s: string) => process.stdout.write(`${s}\n`);
out(
  `exposition: ${n} environments (${checks.join(', ')}; confirmation pings ${values.confirm}; ` +
    `base URL ${values['base-url']}), ` +
    `${pingsFirst} ping(s) per environment first, ${rounds} rounds, node ${process.version}`,
);
out(
  `size: ${(text.length / 1e6).toFixed(2)} MB, ${samples.length} samples ` +
    `(${(samples.length / n).toFixed(0)} per environment); gzip level 1: ${(zipped.fast / 1e6).toFixed(2)} MB ` +
    `in ${zipped.fastMs.toFixed(0)} ms, level 6: ${(zipped.default / 1e6).toFixed(2)} MB in ${zipped.defaultMs.toFixed(0)} ms`,
);
out(
  `render, median ms: prom-client ${median(times.promClient).toFixed(0)}, MetricsRenderer ` +
    `${median(times.renderer).toFixed(0)} (${(median(times.promClient) / median(times.renderer)).toFixed(1)}× faster; ` +
    `its first render, which writes every label text, ${times.first.toFixed(0)})`,
);
out('\nper family, largest first:');
out('| family | samples per environment | MB |');
out('|---|---|---|');
for (const [family, { samples: count, bytes }] of [...perFamily].sort(
  (a, b) => b[1].bytes - a[1].bytes,
)) {
  if (bytes < 10_000) continue;
  out(`| ${family} | ${(count / n).toFixed(0)} | ${(bytes / 1e6).toFixed(2)} |`);
}
