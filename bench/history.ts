/**
 * Memory and transfer size of the status page's history (`src/server/history.ts`) at the
 * defaults: 24 h of pings at 60 s (1440 samples), lifecycle every 5 min (288 samples), and the
 * last 100 runs of each in full. Fills ENVIRONMENTS environments with realistic runs (the checks'
 * own summary and details functions, lifecycle runs with a step per request), then reads the heap.
 *
 *   node --expose-gc --import tsx bench/history.ts
 */
import { gzipSync } from 'node:zlib';
import { lifecycleCheck } from '../src/checks/lifecycle/index.js';
import { pingCheck } from '../src/checks/ping/index.js';
import type { CheckResult, StepRecord } from '../src/kernel/check.js';
import { RunHistory } from '../src/server/history.js';
import { CHECK_LIST } from '../src/checks/index.js';

const ENVIRONMENTS = 10;
const WINDOW_MS = 24 * 60 * 60 * 1000;
const RUNS = 100;
const PING_INTERVAL_MS = 60_000;
const LIFECYCLE_INTERVAL_MS = 5 * 60_000;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function heap(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

function step(name: string, method: string, path: string, status: number, ms: number): StepRecord {
  return { name, method, path, statusCode: status, durationMs: ms, requestId: null, error: null };
}

/** A ping run as the runner returns it (fresh objects each time, like the worker's messages). */
function pingRun(environment: string, t: number, i: number): CheckResult {
  const durationMs = 40 + (i % 50) + Math.random();
  const phases = { connect: 1.234, tls: 12.345, processing: durationMs - 20, transfer: 0.456 };
  const facts = {
    result: 'ok',
    durationMs,
    phases,
    connectionOpened: true,
    up: true,
    latencyClass: 'expected',
  } as const;
  return {
    check: 'ping',
    environment,
    outcome: 'pass',
    reason: null,
    summary: pingCheck.summary(facts),
    details: pingCheck.details?.(facts) ?? {},
    startedAt: t,
    durationMs,
    steps: [step('ping', 'GET', '/ping', 200, durationMs)],
    facts,
    responses: [{ operation: 'ping', code: '200' }],
    contractChecks: [],
  };
}

/** A lifecycle run: create, three polls (pending, pending, available), get, close, verify_gone. */
function lifecycleRun(environment: string, t: number): CheckResult {
  const facts = {
    result: 'success',
    qualifyOutcome: 'available',
    qualifyDurationMs: 6123.4 + Math.random(),
    stepDurationsMs: { create: 120.1, poll: 6000.2, get: 80.3, close: 70.4, verify_gone: 60.5 },
    pollStatuses: ['pending', 'pending', 'pending', 'available'],
    serviceDataSet: '4305',
  } as const;
  const steps = [
    step('create', 'POST', '/sessions', 201, 120.123),
    step('poll', 'GET', '/sessions/{token}/services/internet', 200, 60.1),
    step('poll', 'GET', '/sessions/{token}/services/internet', 200, 61.2),
    step('poll', 'GET', '/sessions/{token}/services/internet', 200, 140.3),
    step('get', 'GET', '/sessions/{token}', 200, 80.4),
    step('close', 'DELETE', '/sessions/{token}', 200, 70.5),
    step('verify_gone', 'GET', '/sessions/{token}', 410, 60.6),
  ];
  return {
    check: 'lifecycle',
    environment,
    outcome: 'pass',
    reason: null,
    summary: lifecycleCheck.summary(facts as never),
    details: lifecycleCheck.details?.(facts as never) ?? {},
    startedAt: t,
    durationMs: 6600.7,
    steps,
    facts,
    responses: steps.map((s) => ({ operation: 'poll_services', code: String(s.statusCode) })),
    contractChecks: [
      { check: 'session_token_header', result: 'pass' },
      { check: 'response_schema', result: 'pass' },
      { check: 'closed_session_gone', result: 'pass' },
    ],
  };
}

const names = Array.from({ length: ENVIRONMENTS }, (_, i) => `env${i}`);
const now = Date.now();
const before = heap();
const history = new RunHistory({
  checks: CHECK_LIST,
  windowMs: WINDOW_MS,
  runs: RUNS,
  now: () => now,
  environments: names.map((name) => ({
    name,
    thresholds: { expectedMs: 100, warningMs: 500, criticalMs: 1000 },
    checks: [
      { name: 'ping', enabled: true, intervalMs: PING_INTERVAL_MS },
      { name: 'lifecycle', enabled: true, intervalMs: LIFECYCLE_INTERVAL_MS },
    ],
  })),
});
// Twice the window: every ring is full and has wrapped.
for (let t = now - 2 * WINDOW_MS; t <= now; t += PING_INTERVAL_MS) {
  const i = (t / PING_INTERVAL_MS) | 0;
  for (const name of names) {
    history.add(pingRun(name, t, i));
    if (i % (LIFECYCLE_INTERVAL_MS / PING_INTERVAL_MS) === 0) history.add(lifecycleRun(name, t));
  }
}
const after = heap();
const perEnvironment = (after - before) / ENVIRONMENTS;

const full = JSON.stringify(history.document({ environment: 'env0' }));
const seq = history.document({ environment: 'env0', limit: 1 }).seq;
for (const name of names) history.add(pingRun(name, now + 1, 0));
const increment = JSON.stringify(history.document({ after: seq + ENVIRONMENTS - 1 }));
const doc = history.document({ environment: 'env0' });
const env0 = doc.environments['env0'];

console.log(
  JSON.stringify(
    {
      node: process.version,
      environments: ENVIRONMENTS,
      retained_per_environment: Object.fromEntries(
        Object.entries(env0?.checks ?? {}).map(([k, v]) => [
          k,
          { samples: v.samples.length, runs: v.runs.length },
        ]),
      ),
      heap_per_environment_bytes: Math.round(perEnvironment),
      heap_per_environment_mib: Number((perEnvironment / 1024 / 1024).toFixed(3)),
      history_json_one_environment_bytes: Buffer.byteLength(full),
      // What the page transfers on its first load per environment: /api/history is gzipped.
      history_json_one_environment_gzip_bytes: gzipSync(full).length,
      increment_json_one_new_ping_per_environment_bytes: Buffer.byteLength(increment),
    },
    null,
    2,
  ),
);
