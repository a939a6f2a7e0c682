/**
 * Hand-built check Results (the plain data the runner produces) and small readers of registry
 * values, shared by the metrics, server and golden tests.
 */
import type { Registry, RegistryContentType } from 'prom-client';
import type { PhaseTimings } from '../../src/api/client.js';
import type { CheckResult, StepRecord } from '../../src/kernel/check.js';
import type { AnalyticsFacts } from '../../src/checks/analytics/index.js';
import type { CoverageFacts } from '../../src/checks/coverage/index.js';
import type { LifecycleFacts } from '../../src/checks/lifecycle/index.js';
import type { PingFacts } from '../../src/checks/ping/index.js';
import type { ProvidersFacts } from '../../src/checks/providers/index.js';
import { Recorder } from '../../src/metrics/recorder.js';
import {
  createMetrics,
  type Metrics,
  type MetricsEnvironment,
} from '../../src/metrics/registry.js';
import { testEnvironment } from '../support/harness.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import type { TlsFacts } from '../../src/checks/tls/inspect.js';

/** 2024-05-01T12:00:00Z */
export const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

/** An environment with every registered check enabled. */
export function environment(name: string): MetricsEnvironment {
  return { name };
}

export const BUILD = { version: '1.2.3', revision: 'abc1234', nodejs: 'v20.20.2' };

/**
 * A registry for production and sandbox, without process metrics (keeps tests deterministic)
 * unless `processMetrics` asks for the daemon's full set.
 */
export function testMetrics(
  names: string[] = ['production', 'sandbox'],
  opts: { processMetrics?: boolean } = {},
): Metrics {
  const metrics = createMetrics({
    checks: CHECK_LIST,
    environments: names.map(environment),
    build: BUILD,
    collectDefaultMetrics: opts.processMetrics ?? false,
    // Every family registered: the control probe's too.
    control: true,
  });
  // The configuration gauges, as the daemon sets them at start-up (ping every 60 s, with
  // confirmation pings on as by default).
  const recorder = new Recorder(metrics);
  for (const name of names) {
    recorder.describeEnvironment(
      testEnvironment('http://127.0.0.1:9', {
        name,
        ping: {
          intervalMs: 60_000,
          confirm: { intervalMs: 10_000, windowMs: 180_000, successes: 3 },
        },
      }),
    );
  }
  return metrics;
}

function step(partial: Partial<StepRecord> & { name: string }): StepRecord {
  return {
    method: 'GET',
    path: null,
    statusCode: 200,
    durationMs: 10,
    requestId: null,
    error: null,
    ...partial,
  };
}

type PingKind = 'ok' | 'timeout' | 'unauthorized' | 'teapot';

/** A ping Result: ok (42 ms), timeout (10 s, no response), unauthorized (401), teapot (418). */
export function pingResult(
  kind: PingKind,
  opts: { environment?: string; startedAt?: number } = {},
): CheckResult {
  const env = opts.environment ?? 'production';
  const startedAt = opts.startedAt ?? T0;
  const table = {
    ok: { result: 'ok', ms: 42, code: 200, up: true, latency: 'expected', error: null },
    timeout: {
      result: 'timeout',
      ms: 10_000,
      code: null,
      up: false,
      latency: 'critical',
      error: 'headers timeout',
    },
    unauthorized: {
      result: 'unauthorized',
      ms: 80,
      code: 401,
      up: false,
      latency: 'expected',
      error: 'HTTP 401',
    },
    teapot: {
      result: 'unexpected_status',
      ms: 120,
      code: 418,
      up: false,
      latency: 'elevated',
      error: 'HTTP 418',
    },
  } as const;
  const row = table[kind];
  const phases: PhaseTimings =
    kind === 'timeout'
      ? { connect: 3, tls: 12 }
      : { connect: 3, tls: 12, processing: row.ms - 17, transfer: 2 };
  const ping: PingFacts = {
    result: row.result,
    durationMs: row.ms,
    phases,
    connectionOpened: true,
    up: row.up,
    latencyClass: row.latency,
  };
  return {
    check: 'ping',
    environment: env,
    outcome: row.up ? 'pass' : 'fail',
    reason: row.up ? null : row.result,
    summary: { latency_class: row.latency, connection: 'opened' },
    startedAt,
    durationMs: row.ms + 1,
    steps: [
      step({
        name: 'ping',
        path: '/ping',
        statusCode: row.code,
        durationMs: row.ms,
        requestId: kind === 'unauthorized' ? 'req-401-abc' : null,
        error: row.error,
      }),
    ],
    facts: ping,
    responses: [{ operation: 'ping', code: row.code === null ? 'none' : String(row.code) }],
    // A ping counts no contract check: its body is its own result (invalid_body).
    contractChecks: [],
  };
}

type LifecycleKind = 'success' | 'qualify_timeout' | 'not_gone_after_close';

/**
 * A lifecycle Result:
 * - success: created pending, polled pending → available in 24 s, data set 20240501;
 * - qualify_timeout: pending/retry_later until the 90 s give-up, then read, closed, 410;
 * - not_gone_after_close: available at once, closed, but the closed session answered 200.
 */
export function lifecycleResult(
  kind: LifecycleKind,
  opts: { environment?: string; startedAt?: number; serviceDataSet?: string | null } = {},
): CheckResult {
  const env = opts.environment ?? 'production';
  const startedAt = opts.startedAt ?? T0;
  const token = '/sessions/tok';
  const facts: LifecycleFacts = {
    success: {
      result: 'success',
      qualifyOutcome: 'available',
      qualifyDurationMs: 24_000,
      stepDurationsMs: { create: 300, poll: 23_700, get: 50, close: 60, verify_gone: 40 },
      pollStatuses: ['pending', 'pending', 'available'],
      serviceDataSet: '20240501',
    },
    qualify_timeout: {
      result: 'qualify_timeout',
      qualifyOutcome: 'timeout',
      qualifyDurationMs: 90_000,
      stepDurationsMs: { create: 280, poll: 90_000, get: 45, close: 55, verify_gone: 35 },
      pollStatuses: ['pending', 'retry_later', 'pending'],
      serviceDataSet: null,
    },
    not_gone_after_close: {
      result: 'not_gone_after_close',
      qualifyOutcome: 'available',
      qualifyDurationMs: 310,
      stepDurationsMs: { create: 310, get: 50, close: 60, verify_gone: 40 },
      pollStatuses: ['available'],
      serviceDataSet: '20240501',
    },
  }[kind] as LifecycleFacts;
  if (opts.serviceDataSet !== undefined) facts.serviceDataSet = opts.serviceDataSet;
  const gone = kind !== 'not_gone_after_close';
  const polls = kind === 'success' ? 2 : kind === 'qualify_timeout' ? 2 : 0;
  const steps: StepRecord[] = [
    step({ name: 'create', method: 'POST', path: '/sessions', statusCode: 201, durationMs: 300 }),
    ...(polls > 0
      ? [step({ name: 'poll', method: null, path: null, statusCode: null, durationMs: 23_700 })]
      : []),
    step({ name: 'get', path: token, durationMs: 50 }),
    step({ name: 'close', method: 'DELETE', path: token, durationMs: 60 }),
    step({
      name: 'verify_gone',
      path: token,
      statusCode: gone ? 410 : 200,
      durationMs: 40,
      error: gone ? null : 'closed session answered 200, expected 410',
    }),
  ];
  const responses: CheckResult['responses'] = [
    { operation: 'create_session', code: '201' },
    ...Array.from({ length: polls }, () => ({ operation: 'poll_services' as const, code: '200' })),
    { operation: 'get_session', code: '200' },
    { operation: 'close_session', code: '200' },
    { operation: 'verify_gone', code: gone ? '410' : '200' },
  ];
  return {
    check: 'lifecycle',
    environment: env,
    outcome: kind === 'success' ? 'pass' : 'fail',
    reason: kind === 'success' ? null : kind,
    summary: { qualify_status: facts.qualifyOutcome, service_data_set: facts.serviceDataSet },
    startedAt,
    durationMs: kind === 'qualify_timeout' ? 91_000 : 25_000,
    steps,
    facts,
    responses,
    contractChecks: [
      { check: 'response_schema', result: 'pass' },
      { check: 'session_token_header', result: 'pass' },
      gone
        ? { check: 'closed_session_gone', result: 'pass' }
        : { check: 'closed_session_gone', result: 'fail', detail: 'GET answered 200' },
    ],
  };
}

/** A passing run of a check that makes one request per step, as `<check>` Results share it. */
function passingRun<Facts>(
  check: string,
  facts: Facts,
  steps: Array<{
    name: string;
    path: string;
    operation: CheckResult['responses'][number]['operation'];
  }>,
  opts: { environment?: string; startedAt?: number },
): CheckResult<Facts> {
  return {
    check,
    environment: opts.environment ?? 'production',
    outcome: 'pass',
    reason: null,
    summary: {},
    startedAt: opts.startedAt ?? T0,
    durationMs: 50 * steps.length,
    steps: steps.map((s) => step({ name: s.name, path: s.path, durationMs: 50 })),
    facts,
    responses: steps.map((s) => ({ operation: s.operation, code: '200' })),
    contractChecks: [{ check: 'response_schema', result: 'pass' }],
  };
}

/** A tls Result: a verified chain that ends on 2027-01-01, well ahead. */
export function tlsResult(opts: { environment?: string; startedAt?: number } = {}): CheckResult {
  const facts: TlsFacts = {
    result: 'ok',
    reason: null,
    earliestNotAfter: 1_798_761_600,
    daysLeft: 40,
    verified: true,
    authorized: true,
    authorizationError: null,
    hostnameMatches: true,
    hostnameError: null,
    chainLength: 2,
    durationMs: 12,
  };
  return { ...passingRun('tls', facts, [], opts), contractChecks: [] };
}

/** A providers Result: 12 FCC providers and 3 supplemental brands, a changed list. */
export function providersResult(
  opts: { environment?: string; startedAt?: number } = {},
): CheckResult<ProvidersFacts> {
  const facts: ProvidersFacts = {
    result: 'ok',
    counts: { fcc_provider: 12, supplemental_brand: 3 },
    listHash: 'a1b2c3',
    changed: true,
    violation: null,
  };
  return passingRun(
    'providers',
    facts,
    [{ name: 'providers', path: '/service_providers', operation: 'service_providers' }],
    opts,
  );
}

/** A coverage Result: 4 providers, and the request without geography refused with a 400. */
export function coverageResult(
  opts: { environment?: string; startedAt?: number } = {},
): CheckResult<CoverageFacts> {
  const facts: CoverageFacts = {
    result: 'ok',
    providers: 4,
    matchedAreasViolation: null,
    refusalStatus: 400,
  };
  return passingRun(
    'coverage',
    facts,
    [{ name: 'coverage', path: '/coverage', operation: 'coverage' }],
    opts,
  );
}

/** An analytics Result: one page synced, one session appeared (lag 45 s), one still awaited. */
export function analyticsResult(
  opts: { environment?: string; startedAt?: number } = {},
): CheckResult<AnalyticsFacts> {
  const facts: AnalyticsFacts = {
    result: 'success',
    pages: 1,
    rows: 7,
    syncDurationMs: 80,
    syncSucceeded: true,
    ingestLagsMs: [45_000],
    late: 0,
    missing: 0,
    awaiting: 1,
    oldestAwaitingMs: 20_000,
  };
  return passingRun(
    'analytics',
    facts,
    [
      { name: 'sync', path: '/analytics/sessions', operation: 'list_analytics_sessions' },
      { name: 'lookup', path: '/analytics/sessions/{token}', operation: 'get_analytics_session' },
    ],
    opts,
  );
}

type AnyRegistry = Registry<RegistryContentType>;

/** The value of one sample (`sample` defaults to the metric name), or undefined when absent. */
export async function sampleValue(
  registry: AnyRegistry,
  name: string,
  labels: Record<string, string | number>,
  sample: string = name,
): Promise<number | undefined> {
  const samples = await samplesOf(registry, name);
  const found = samples.find(
    (s) => (s.metricName ?? name) === sample && sameLabels(s.labels, labels),
  );
  return found?.value;
}

/** Every sample of a metric, as prom-client's JSON gives them. */
export async function samplesOf(
  registry: AnyRegistry,
  name: string,
): Promise<Array<{ metricName?: string; labels: Record<string, string | number>; value: number }>> {
  const all = await registry.getMetricsAsJSON();
  const metric = all.find((m) => m.name === name);
  if (metric === undefined) throw new Error(`metric ${name} not registered`);
  return metric.values as Array<{
    metricName?: string;
    labels: Record<string, string | number>;
    value: number;
  }>;
}

function sameLabels(a: Record<string, string | number>, b: Record<string, string | number>) {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => String(a[k]) === String(b[k]));
}
