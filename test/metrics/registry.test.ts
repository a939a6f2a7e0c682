import { Registry, register as globalRegistry, type Counter, type Histogram } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { type MetricDefinition } from '../../src/metrics/definitions.js';
import { CHECK_LIST, METRICS } from '../../src/checks/index.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { PING_BUCKETS } from '../../src/checks/ping/index.js';
import { validateConfigDocument } from '../../src/config/index.js';
import {
  bucketsOf,
  checkVocabulary,
  createMetrics,
  handleOf,
  knownLabelSets,
  metricsEnvironmentOf,
  type MetricsEnvironment,
} from '../../src/metrics/registry.js';
import { OUTCOMES, requestPhases } from '../../src/kernel/vocabulary.js';
import { knownStatusCodes, operationStatusCodes } from '../../src/metrics/definitions.js';
import { testEnvironment } from '../support/harness.js';

/** The operations of the registered checks and the codes each starts at 0 (`Check.operations`). */
const OPERATION_STATUS_CODES = operationStatusCodes(CHECK_LIST);
const OPERATIONS = Object.keys(OPERATION_STATUS_CODES);
const KNOWN_STATUS_CODES = knownStatusCodes(CHECK_LIST);
import { BUILD, environment, sampleValue, samplesOf, testMetrics } from './fixtures.js';

/**
 * The metric families docs/metrics.md documents, typed in again on purpose: the test compares the
 * code against the published reference, not the code against itself. Value sets are the ones the
 * reference lists for each label (a minimum: the code may add values).
 */
const CONTRACT: Array<{
  name: string;
  type: 'counter' | 'gauge' | 'histogram';
  labels: string[];
  values?: Record<string, string[]>;
}> = [
  {
    name: 'isa_ping_attempts_total',
    type: 'counter',
    labels: ['environment', 'result'],
    values: {
      result: [
        'ok',
        'server_error',
        'timeout',
        'network_error',
        'unauthorized',
        'rate_limited',
        'unexpected_status',
        'invalid_body',
      ],
    },
  },
  { name: 'isa_ping_duration_seconds', type: 'histogram', labels: ['environment'] },
  {
    name: 'isa_ping_phase_duration_seconds',
    type: 'histogram',
    labels: ['environment', 'phase'],
    values: { phase: ['connect', 'tls', 'processing', 'transfer', 'resolve'] },
  },
  { name: 'isa_ping_last_duration_seconds', type: 'gauge', labels: ['environment'] },
  { name: 'isa_ping_last_attempt_timestamp_seconds', type: 'gauge', labels: ['environment'] },
  { name: 'isa_ping_up', type: 'gauge', labels: ['environment'] },
  {
    name: 'isa_latency_threshold_seconds',
    type: 'gauge',
    labels: ['environment', 'level'],
    values: { level: ['expected', 'warning', 'critical'] },
  },
  {
    name: 'isa_lifecycle_runs_total',
    type: 'counter',
    labels: ['environment', 'result'],
    values: {
      result: [
        'success',
        'create_failed',
        'qualify_failed',
        'qualify_timeout',
        'unexpected_outcome',
        'close_failed',
        'not_gone_after_close',
        'unauthorized',
        'rate_limited',
        'address_validation_unavailable',
        'budget',
        'error',
      ],
    },
  },
  {
    name: 'isa_lifecycle_step_duration_seconds',
    type: 'histogram',
    labels: ['environment', 'step'],
    values: { step: ['create', 'poll', 'get', 'close', 'verify_gone'] },
  },
  { name: 'isa_lifecycle_last_success_timestamp_seconds', type: 'gauge', labels: ['environment'] },
  {
    name: 'isa_qualify_outcomes_total',
    type: 'counter',
    labels: ['environment', 'status'],
    values: { status: ['available', 'no_service', 'failed', 'timeout'] },
  },
  {
    name: 'isa_qualify_polls_total',
    type: 'counter',
    labels: ['environment', 'status'],
    values: { status: ['available', 'no_service', 'failed', 'pending', 'retry_later'] },
  },
  { name: 'isa_qualify_duration_seconds', type: 'histogram', labels: ['environment'] },
  {
    name: 'isa_contract_checks_total',
    type: 'counter',
    labels: ['environment', 'check', 'result'],
    values: {
      check: ['closed_session_gone', 'response_schema', 'session_token_header'],
      result: ['pass', 'fail', 'error'],
    },
  },
  {
    name: 'isa_http_responses_total',
    type: 'counter',
    labels: ['environment', 'operation', 'code'],
    values: {
      operation: [
        'ping',
        'create_session',
        'get_session',
        'poll_services',
        'close_session',
        'verify_gone',
      ],
    },
  },
  { name: 'isa_synthetic_sessions_open', type: 'gauge', labels: ['environment'] },
  {
    name: 'isa_service_data_set_info',
    type: 'gauge',
    labels: ['environment', 'service_data_set'],
  },
  {
    name: 'isa_checks_skipped_total',
    type: 'counter',
    labels: ['environment', 'check', 'reason'],
    values: {
      check: ['ping', 'lifecycle'],
      reason: ['overlap', 'rate_limit_backoff', 'budget', 'ledger_unwritable'],
    },
  },
  { name: 'isa_monitor_build_info', type: 'gauge', labels: ['version', 'revision', 'nodejs'] },
];

const DEFINITIONS = Object.values(METRICS) as MetricDefinition[];

/** Metrics of the monitor process itself, without an `environment` label. */
const MONITOR_WIDE = [
  'isa_monitor_build_info',
  'isa_measurement_event_loop_lag_seconds',
  'isa_session_ledger_writable',
  'isa_config_last_reload_successful',
  'isa_config_last_reload_success_timestamp_seconds',
  'isa_metrics_server_connections_rejected_total',
  // The control probe describes the monitor's own network, per location.
  'isa_control_probe_success',
  'isa_control_probe_attempts_total',
  'isa_control_probe_duration_seconds',
];
describe('createMetrics', () => {
  it('registers every metric of docs/metrics.md with its type and labels', async () => {
    const { registry } = testMetrics();
    const json = await registry.getMetricsAsJSON();
    for (const contract of CONTRACT) {
      const def = DEFINITIONS.find((d) => d.name === contract.name);
      expect(def, contract.name).toBeDefined();
      expect(def?.type, contract.name).toBe(contract.type);
      expect([...(def?.labels ?? [])].sort(), contract.name).toEqual([...contract.labels].sort());
      // The contract is a minimum: later checks add values (e.g. their own contract checks).
      for (const [label, values] of Object.entries(contract.values ?? {})) {
        expect([...(def?.knownValues?.[label] ?? [])], `${contract.name}{${label}}`).toEqual(
          expect.arrayContaining([...values]),
        );
      }
      const exported = json.find((m) => m.name === contract.name);
      expect(exported?.type, contract.name).toBe(contract.type);
    }
  });

  it('registers every definition, and nothing outside definitions.ts carries the isa_ prefix', async () => {
    const { registry } = testMetrics();
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
    // The control probe's success gauge is registered at the first probe (absent until then).
    expect(names).toEqual(
      DEFINITIONS.map((d) => d.name)
        .filter((name) => name !== 'isa_control_probe_success')
        .sort(),
    );
    for (const def of DEFINITIONS) {
      expect(def.name).toMatch(/^isa_[a-z0-9_]+$/);
      if (def.type === 'counter') expect(def.name).toMatch(/_total$/);
      else expect(def.name).not.toMatch(/_total$/);
      // The monitor's own metrics describe the process, not an environment.
      if (!MONITOR_WIDE.includes(def.name)) expect(def.labels).toContain('environment');
    }
  });

  it('gives every counter and histogram label a known value set, so all can start at 0', () => {
    for (const def of DEFINITIONS.filter((d) => d.type !== 'gauge')) {
      for (const label of def.labels.filter((l) => l !== 'environment')) {
        expect(def.knownValues?.[label], `${def.name}{${label}}`).toBeDefined();
      }
    }
  });

  it('exports every known label combination as 0 from start-up', async () => {
    const envs = ['production', 'sandbox'];
    const { registry } = testMetrics(envs);
    for (const def of DEFINITIONS.filter((d) => d.type !== 'gauge')) {
      // Every check is enabled: check-scoped labels take every check's values.
      const expected = knownLabelSets(def, envs, checkVocabulary(CHECK_LIST));
      const perEnv =
        def === METRICS.httpResponses
          ? // Per operation, only the codes its endpoint documents (the spec's table).
            Object.values(OPERATION_STATUS_CODES).reduce((n, codes) => n + codes.length, 0)
          : def.labels
              .filter((l) => l !== 'environment')
              // A label's values from 0: those of `startAtZero` where it lists the label.
              .reduce(
                (n, l) => n * ((def.startAtZero?.[l] ?? def.knownValues?.[l])?.length ?? 0),
                1,
              );
      const environments = def.labels.includes('environment') ? envs.length : 1;
      // Left out: the ping's run count and duration (its own isa_ping_attempts_total and
      // isa_ping_duration_seconds), and the skips for an unwritable ledger of the checks that
      // create no sessions.
      const left =
        def === METRICS.checkDuration
          ? environments
          : def === METRICS.checkRuns
            ? environments * OUTCOMES.length
            : def === METRICS.checksSkipped
              ? environments * CHECK_LIST.filter((c) => c.createsSessions !== true).length
              : 0;
      expect(expected, def.name).toHaveLength(environments * perEnv - left);
      const sampleName = def.type === 'histogram' ? `${def.name}_count` : def.name;
      const samples = (await samplesOf(registry, def.name)).filter(
        (s) => (s.metricName ?? def.name) === sampleName,
      );
      expect(samples, def.name).toHaveLength(expected.length);
      for (const labels of expected) {
        expect(
          await sampleValue(registry, def.name, labels, sampleName),
          JSON.stringify(labels),
        ).toBe(0);
      }
    }
  });

  it('zero-initialises histogram buckets too, so rate() over buckets works from the start', async () => {
    const { registry } = testMetrics(['production']);
    const buckets = (await samplesOf(registry, 'isa_ping_duration_seconds')).filter(
      (s) => s.metricName === 'isa_ping_duration_seconds_bucket',
    );
    expect(buckets.map((b) => b.labels.le)).toEqual([...METRICS.pingDuration.buckets, '+Inf']);
    expect(buckets.every((b) => b.value === 0)).toBe(true);
  });

  it('has ping buckets exactly at 0.1, 0.5 and 1 s reaching past the 10 s timeout, and qualify buckets at 30, 45 and 90 s', () => {
    const ping: readonly number[] = METRICS.pingDuration.buckets;
    for (const le of [0.1, 0.5, 1]) expect(ping).toContain(le);
    expect(Math.max(...ping)).toBeGreaterThan(10);
    const qualify: readonly number[] = METRICS.qualifyDuration.buckets;
    for (const le of [30, 45, 90]) expect(qualify).toContain(le);
  });

  it('sets the configured thresholds, ping interval (via the ping check) and build info', async () => {
    const metrics = createMetrics({
      checks: CHECK_LIST,
      environments: [environment('production'), environment('sandbox')],
      build: BUILD,
      collectDefaultMetrics: false,
    });
    const recorder = new Recorder(metrics);
    recorder.describeEnvironment(
      testEnvironment('http://127.0.0.1:9', {
        name: 'production',
        thresholds: { expectedMs: 100, warningMs: 500, criticalMs: 1000 },
        ping: { intervalMs: 60_000 },
      }),
    );
    recorder.describeEnvironment(
      testEnvironment('http://127.0.0.1:9', {
        name: 'sandbox',
        thresholds: { expectedMs: 250, warningMs: 750, criticalMs: 2000 },
        ping: { intervalMs: 30_000 },
      }),
    );
    const r = metrics.registry;
    const t = 'isa_latency_threshold_seconds';
    expect(await sampleValue(r, t, { environment: 'production', level: 'expected' })).toBe(0.1);
    expect(await sampleValue(r, t, { environment: 'production', level: 'warning' })).toBe(0.5);
    expect(await sampleValue(r, t, { environment: 'production', level: 'critical' })).toBe(1);
    expect(await sampleValue(r, t, { environment: 'sandbox', level: 'expected' })).toBe(0.25);
    expect(await sampleValue(r, t, { environment: 'sandbox', level: 'critical' })).toBe(2);
    expect(await sampleValue(r, 'isa_ping_interval_seconds', { environment: 'sandbox' })).toBe(30);
    expect(await sampleValue(r, 'isa_ping_interval_seconds', { environment: 'production' })).toBe(
      60,
    );
    expect(await samplesOf(r, 'isa_monitor_build_info')).toEqual([{ labels: BUILD, value: 1 }]);
  });

  it('starts sessions_open at 0 and leaves the last-event gauges absent until their first event', async () => {
    const { registry } = testMetrics();
    for (const env of ['production', 'sandbox']) {
      expect(await sampleValue(registry, 'isa_synthetic_sessions_open', { environment: env })).toBe(
        0,
      );
    }
    for (const name of [
      'isa_ping_up',
      'isa_ping_last_duration_seconds',
      'isa_ping_last_attempt_timestamp_seconds',
      'isa_lifecycle_last_success_timestamp_seconds',
      'isa_service_data_set_info',
    ]) {
      expect(await samplesOf(registry, name), name).toEqual([]);
    }
  });

  it('exports the session families only where an enabled check creates sessions', async () => {
    const { registry } = createMetrics({
      checks: CHECK_LIST,
      environments: [
        { name: 'pingonly', checks: ['ping'] },
        { name: 'sessions', checks: ['ping', 'lifecycle'] },
      ],
      build: BUILD,
      collectDefaultMetrics: false,
    });
    for (const name of [
      'isa_synthetic_sessions_open',
      'isa_synthetic_sessions_unrecoverable_total',
    ]) {
      expect(await samplesOf(registry, name), name).toEqual([
        { labels: { environment: 'sessions' }, value: 0 },
      ]);
    }
  });

  it("adds prom-client's process and Node.js metrics, but not its 10 ms lag monitor nor its gauges named _total, unless disabled", async () => {
    const withDefaults = createMetrics({
      checks: CHECK_LIST,
      environments: [environment('production')],
      build: BUILD,
    });
    const names = (await withDefaults.registry.getMetricsAsJSON()).map((m) => m.name);
    for (const name of [
      'process_cpu_seconds_total',
      'process_start_time_seconds',
      'process_resident_memory_bytes',
      'process_open_fds',
      'nodejs_heap_size_used_bytes',
      'nodejs_gc_duration_seconds',
      'nodejs_version_info',
      'nodejs_active_handles',
      'nodejs_active_resources',
    ]) {
      expect(names).toContain(name);
    }
    expect(names.filter((n) => n.startsWith('nodejs_eventloop_lag'))).toEqual([]);
    // Gauges prom-client names like counters stay out: promtool would reject them.
    expect(names.filter((n) => n.endsWith('_total') && !n.startsWith('isa_'))).toEqual([
      'process_cpu_user_seconds_total',
      'process_cpu_system_seconds_total',
      'process_cpu_seconds_total',
    ]);
    const without = testMetrics();
    const bare = (await without.registry.getMetricsAsJSON()).map((m) => m.name);
    expect(bare.filter((n) => !n.startsWith('isa_'))).toEqual([]);
  });

  it('never touches the global registry, so several metric sets can coexist', async () => {
    const before = (await globalRegistry.getMetricsAsJSON()).length;
    const a = testMetrics();
    const b = testMetrics();
    (handleOf(a, 'pingAttempts') as Counter<string>).inc({
      environment: 'production',
      result: 'ok',
    });
    expect(
      await sampleValue(b.registry, 'isa_ping_attempts_total', {
        environment: 'production',
        result: 'ok',
      }),
    ).toBe(0);
    expect((await globalRegistry.getMetricsAsJSON()).length).toBe(before);
  });

  it('uses the registry it is given', () => {
    const registry = new Registry();
    const metrics = createMetrics({
      checks: CHECK_LIST,
      environments: [environment('production')],
      build: BUILD,
      registry,
      collectDefaultMetrics: false,
    });
    expect(metrics.registry).toBe(registry);
    expect(registry.getSingleMetric('isa_ping_up')).toBe(handleOf(metrics, 'pingUp'));
  });

  it('rejects duplicate environment names instead of merging their series', () => {
    expect(() =>
      createMetrics({
        checks: CHECK_LIST,
        environments: [environment('production'), environment('production')],
        build: BUILD,
        collectDefaultMetrics: false,
      }),
    ).toThrow(/duplicate environment name/);
  });
});

describe('location', () => {
  it('puts location="<value>" on every series when set, and on none when unset', async () => {
    const withLocation = createMetrics({
      checks: CHECK_LIST,
      environments: [environment('production')],
      build: BUILD,
      location: 'eu-west',
      control: true,
    });
    new Recorder(withLocation).recordControlProbe('ok', 12);
    const lines = (await withLocation.registry.metrics())
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'));
    expect(lines.length).toBeGreaterThan(100);
    expect(lines.filter((line) => !line.includes('location="eu-west"'))).toEqual([]);
    const without = (await testMetrics().registry.metrics()).split('\n');
    expect(without.filter((line) => line.includes('location='))).toEqual([]);
  });
});

describe('control probe metrics', () => {
  it('are absent unless control is configured, and start at 0 when it is', async () => {
    const off = createMetrics({
      checks: CHECK_LIST,
      environments: [environment('production')],
      build: BUILD,
    });
    expect(await off.registry.metrics()).not.toContain('isa_control_probe');
    const on = testMetrics();
    const text = await on.registry.metrics();
    expect(text).toContain('isa_control_probe_attempts_total{result="timeout"} 0');
    expect(text).toContain('isa_control_probe_duration_seconds_count 0');
    // The success gauge describes the last probe: absent until there was one.
    expect(text).not.toMatch(/^isa_control_probe_success /m);
    new Recorder(on).recordControlProbe('network_error', 3);
    expect(await on.registry.metrics()).toMatch(/^isa_control_probe_success 0$/m);
  });
});

describe('isa_ping_phase_duration_seconds: resolve only where a name is resolved', () => {
  it('knows the resolve phase of host names and not of IP literals', () => {
    const all = ['resolve', 'connect', 'tls', 'processing', 'transfer'];
    const noResolve = all.filter((phase) => phase !== 'resolve');
    expect(requestPhases('https://api.example.invalid')).toEqual(all);
    expect(requestPhases('http://localhost:8080/env/x')).toEqual(all);
    expect(requestPhases('http://127.0.0.1:8080')).toEqual(noResolve);
    expect(requestPhases('https://10.1.2.3/v1')).toEqual(noResolve);
    expect(requestPhases('http://[::1]:8080')).toEqual(noResolve);
    expect(requestPhases('https://[2001:db8::1]')).toEqual(noResolve);
  });

  it('starts the resolve series at 0 for a host-name environment and leaves it out for an IP literal', async () => {
    const { registry } = createMetrics({
      checks: CHECK_LIST,
      environments: [
        { name: 'named', baseUrl: 'https://api.example.invalid' },
        { name: 'literal', baseUrl: 'http://127.0.0.1:9' },
        { name: 'literal6', baseUrl: 'http://[::1]:9' },
      ],
      build: BUILD,
      collectDefaultMetrics: false,
    });
    const phases = async (environment: string) =>
      (await samplesOf(registry, 'isa_ping_phase_duration_seconds'))
        .filter((s) => s.metricName?.endsWith('_count') && s.labels.environment === environment)
        .map((s) => s.labels.phase);
    expect(await phases('named')).toEqual(['resolve', 'connect', 'tls', 'processing', 'transfer']);
    expect(await phases('literal')).toEqual(['connect', 'tls', 'processing', 'transfer']);
    expect(await phases('literal6')).toEqual(['connect', 'tls', 'processing', 'transfer']);
  });
});

describe('isa_http_responses_total: the codes each operation starts with', () => {
  const codesOf = async (registry: Registry, operation: string) =>
    (await samplesOf(registry, 'isa_http_responses_total'))
      .filter(
        (s) => s.labels['environment'] === 'production' && s.labels['operation'] === operation,
      )
      .map((s) => String(s.labels['code']));

  it('zero-initialises, per operation, the codes its endpoint documents and none', async () => {
    const { registry } = testMetrics(['production']);
    for (const operation of OPERATIONS) {
      const codes = await codesOf(registry, operation);
      expect(codes, operation).toEqual(OPERATION_STATUS_CODES[operation]);
      // What the runbooks read for every operation: a rejected key, a rate limit, a server
      // failure, no answer at all.
      expect(codes, operation).toEqual(expect.arrayContaining(['401', '429', '500', 'none']));
    }
    // Spot checks against the spec (docs/simulator.md): each endpoint's own codes, not the union.
    expect(await codesOf(registry, 'ping')).toEqual(['200', '401', '415', '429', '500', 'none']);
    expect(await codesOf(registry, 'create_session')).toContain('503');
    expect(await codesOf(registry, 'verify_gone')).toContain('410');
    expect(await codesOf(registry, 'ping')).not.toContain('410');
    // The union is the code label's known value set.
    const union = new Set(Object.values(OPERATION_STATUS_CODES).flat());
    expect([...KNOWN_STATUS_CODES].sort()).toEqual([...union].sort());
  });

  it('exports a code outside the table when it is first seen', async () => {
    const metrics = testMetrics(['production']);
    const recorder = new Recorder(metrics);
    const before = await codesOf(metrics.registry, 'ping');
    expect(before).not.toContain('502');
    recorder.recordResult({
      check: 'ping',
      environment: 'production',
      outcome: 'fail',
      reason: 'server_error',
      summary: {},
      startedAt: 0,
      durationMs: 5,
      steps: [],
      facts: null,
      responses: [{ operation: 'ping', code: '502' }],
      contractChecks: [],
    });
    expect(await codesOf(metrics.registry, 'ping')).toEqual([...before, '502']);
  });
});

/** The registry's view of environments written as in a config file (defaults filled in). */
function configured(...environments: Array<Record<string, unknown>>): MetricsEnvironment[] {
  const loaded = validateConfigDocument(
    {
      environments: environments.map((env, i) => ({
        name: `env-${i}`,
        base_url: 'https://api.example.invalid',
        api_key_env: 'TEST_KEY',
        // Ping's histograms are the subject; lifecycle would need addresses.
        lifecycle: { enabled: false },
        ...env,
      })),
    },
    { checks: CHECK_LIST, env: { TEST_KEY: 'test-key' } },
  );
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  return loaded.config.environments.map((env) => metricsEnvironmentOf(env, CHECK_LIST));
}

const LADDER = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 30];

describe('isa_ping_duration_seconds: a coarse ladder and every configured threshold, exactly', () => {
  const def = METRICS.pingDuration;
  const pingBounds = (...environments: Array<Record<string, unknown>>) =>
    bucketsOf(def, configured(...environments), 'ping');

  it('is the ladder alone at the default thresholds (0.1, 0.5, 1 s) and timeout (10 s)', () => {
    expect(PING_BUCKETS).toEqual(LADDER);
    expect(pingBounds({})).toEqual(LADDER);
    expect(pingBounds({}, {}, { thresholds: { critical: '1s' } })).toEqual(LADDER);
  });

  it('adds each distinct configured threshold of every level as a bound of its own', () => {
    expect(
      pingBounds(
        { thresholds: { expected: '100ms', warning: '300ms', critical: '750ms' } },
        { thresholds: { expected: '200ms', warning: '300ms', critical: '600ms' } },
        { thresholds: { critical: '2s' } },
        {},
      ),
    ).toEqual([0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.6, 0.75, 1, 2, 2.5, 30]);
  });

  it('keeps 0.1, 0.5 and 1 s whatever the thresholds (docs/metrics.md)', () => {
    const bounds = pingBounds({
      thresholds: { expected: '40ms', warning: '70ms', critical: '90ms' },
    });
    for (const le of [0.1, 0.5, 1]) expect(bounds).toContain(le);
    expect(bounds).toEqual([0.04, 0.05, 0.07, 0.09, 0.1, 0.25, 0.5, 1, 2.5, 30]);
  });

  it('reaches past the largest ping timeout: a bound at twice it where 30 s is not', () => {
    // Up to 15 s, the ladder's 30 s is at least twice the timeout.
    expect(pingBounds({ ping: { timeout: '15s' } })).toEqual(LADDER);
    expect(pingBounds({ ping: { interval: '1m', timeout: '30s' } })).toEqual([...LADDER, 60]);
    expect(
      pingBounds(
        { ping: { interval: '1m', timeout: '20s' } },
        { ping: { interval: '2m', timeout: '45s' } },
        {},
      ),
    ).toEqual([...LADDER, 90]);
    // A disabled ping's timeout times nothing of this histogram.
    expect(pingBounds({}, { ping: { enabled: false, interval: '2m', timeout: '45s' } })).toEqual(
      LADDER,
    );
    // A threshold past the timeout is a bound too; the timeout's comes above it.
    expect(
      pingBounds({ ping: { interval: '2m', timeout: '40s' }, thresholds: { critical: '35s' } }),
    ).toEqual([...LADDER, 35, 80]);
  });

  it('judges a threshold off the ladder at its own bound: a ping just above it is slow', async () => {
    const metrics = createMetrics({
      checks: CHECK_LIST,
      environments: configured({
        thresholds: { expected: '100ms', warning: '300ms', critical: '600ms' },
      }),
      build: BUILD,
      collectDefaultMetrics: false,
    });
    for (const seconds of [0.3, 0.31, 0.6, 0.61]) {
      (handleOf(metrics, 'pingDuration') as Histogram<string>).observe(
        { environment: 'env-0' },
        seconds,
      );
    }
    const env = { environment: 'env-0' };
    const bucket = async (le: number) =>
      (await sampleValue(metrics.registry, def.name, { ...env, le }, `${def.name}_bucket`)) ?? NaN;
    // What the rules read: all pings minus those in the threshold's bucket.
    const count = (await sampleValue(metrics.registry, def.name, env, `${def.name}_count`)) ?? NaN;
    expect(count - (await bucket(0.6))).toBe(1);
    expect(count - (await bucket(0.3))).toBe(3);
    // At the next ladder bound up, the 0.61 s ping would not count as slow.
    expect(count - (await bucket(1))).toBe(0);
  });
});

describe('isa_ping_confirm_duration_seconds: the bounds the rules read', () => {
  const def = METRICS.pingConfirmDuration;
  const at = (...criticalMs: number[]) =>
    bucketsOf(
      def,
      criticalMs.map((ms, i) => ({
        name: `env-${i}`,
        thresholds: { expectedMs: 100, warningMs: 500, criticalMs: ms },
      })),
      'ping',
    );

  it('keeps only each configured critical threshold, exactly', () => {
    expect(at(1000)).toEqual([1]);
    // Off the ladder: the threshold itself, the bound the scheduled pings' histogram has too.
    expect(at(600)).toEqual([0.6]);
    expect(at(2000, 250, 1000, 1000)).toEqual([0.25, 1, 2]);
    expect(at(45_000)).toEqual([45]);
    expect(at(600)).toEqual(
      bucketsOf(
        METRICS.pingDuration,
        configured({ thresholds: { critical: '600ms' } }),
        'ping',
      ).filter((le) => le === 0.6),
    );
  });

  it('keeps every ladder bound while no thresholds are known', () => {
    expect(bucketsOf(def, [{ name: 'production' }], 'ping')).toEqual([...PING_BUCKETS]);
  });

  it('is created with those bounds by createMetrics', async () => {
    const metrics = createMetrics({
      checks: CHECK_LIST,
      environments: [
        { name: 'a', thresholds: { expectedMs: 100, warningMs: 500, criticalMs: 600 } },
        { name: 'b', thresholds: { expectedMs: 100, warningMs: 500, criticalMs: 1000 } },
      ],
      build: BUILD,
      collectDefaultMetrics: false,
    });
    (handleOf(metrics, 'pingConfirmDuration') as Histogram<string>).observe(
      { environment: 'a' },
      0.7,
    );
    const text = await metrics.registry.getSingleMetricAsString(def.name);
    expect(text).toContain(`${def.name}_bucket{le="0.6",environment="a"} 0`);
    expect(text).toContain(`${def.name}_bucket{le="1",environment="a"} 1`);
    expect(text).not.toContain('le="0.5"');
    expect(text).not.toContain('le="0.75"');
  });
});
