import { beforeEach, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../src/kernel/check.js';
import { dataSetLabel } from '../../src/checks/lifecycle/index.js';
import { Recorder, statusCodeLabel } from '../../src/metrics/recorder.js';
import { createMetrics, type Metrics } from '../../src/metrics/registry.js';
import {
  BUILD,
  T0,
  lifecycleResult,
  pingResult,
  sampleValue,
  samplesOf,
  testMetrics,
} from './fixtures.js';
import { testEnvironment } from '../support/harness.js';
import { CHECK_LIST } from '../../src/checks/index.js';

const prod = { environment: 'production' };

let metrics: Metrics;
let recorder: Recorder;
const value = (name: string, labels: Record<string, string | number>, sample?: string) =>
  sampleValue(metrics.registry, name, labels, sample);

beforeEach(() => {
  metrics = testMetrics();
  recorder = new Recorder(metrics);
});

describe('Recorder.recordResult: ping', () => {
  it('records a good ping: attempt, duration, phases, last values and up', async () => {
    recorder.recordResult(pingResult('ok'));
    expect(await value('isa_ping_attempts_total', { ...prod, result: 'ok' })).toBe(1);
    expect(await value('isa_ping_attempts_total', { ...prod, result: 'timeout' })).toBe(0);
    const hist = 'isa_ping_duration_seconds';
    expect(await value(hist, prod, `${hist}_count`)).toBe(1);
    expect(await value(hist, prod, `${hist}_sum`)).toBeCloseTo(0.042);
    expect(await value(hist, { ...prod, le: 0.05 }, `${hist}_bucket`)).toBe(1);
    const phase = 'isa_ping_phase_duration_seconds';
    expect(await value(phase, { ...prod, phase: 'connect' }, `${phase}_sum`)).toBeCloseTo(0.003);
    expect(await value(phase, { ...prod, phase: 'tls' }, `${phase}_sum`)).toBeCloseTo(0.012);
    expect(await value(phase, { ...prod, phase: 'processing' }, `${phase}_sum`)).toBeCloseTo(0.025);
    expect(await value(phase, { ...prod, phase: 'transfer' }, `${phase}_count`)).toBe(1);
    // No name was resolved: the phase is not observed rather than observed as 0.
    expect(await value(phase, { ...prod, phase: 'resolve' }, `${phase}_count`)).toBe(0);
    expect(await value('isa_ping_last_duration_seconds', prod)).toBeCloseTo(0.042);
    expect(await value('isa_ping_last_attempt_timestamp_seconds', prod)).toBe(T0 / 1000);
    expect(await value('isa_ping_up', prod)).toBe(1);
    expect(
      await value('isa_http_responses_total', { ...prod, operation: 'ping', code: '200' }),
    ).toBe(1);
    // A ping run is one request: isa_ping_attempts_total counts it and isa_ping_duration_seconds
    // times it, with no second copies in the run metrics common to all checks.
    expect(
      await value('isa_check_runs_total', { ...prod, check: 'ping', outcome: 'pass' }),
    ).toBeUndefined();
    expect(
      await value(
        'isa_check_duration_seconds',
        { ...prod, check: 'ping' },
        'isa_check_duration_seconds_count',
      ),
    ).toBeUndefined();
  });

  it('observes a timeout at its elapsed time, with code none and only the phases that happened', async () => {
    recorder.recordResult(pingResult('timeout', { startedAt: T0 + 60_000 }));
    const hist = 'isa_ping_duration_seconds';
    expect(await value('isa_ping_attempts_total', { ...prod, result: 'timeout' })).toBe(1);
    expect(await value(hist, prod, `${hist}_sum`)).toBe(10);
    expect(await value(hist, { ...prod, le: 2.5 }, `${hist}_bucket`)).toBe(0);
    expect(await value(hist, { ...prod, le: 30 }, `${hist}_bucket`)).toBe(1);
    const phase = 'isa_ping_phase_duration_seconds';
    expect(await value(phase, { ...prod, phase: 'tls' }, `${phase}_count`)).toBe(1);
    expect(await value(phase, { ...prod, phase: 'processing' }, `${phase}_count`)).toBe(0);
    expect(
      await value('isa_http_responses_total', { ...prod, operation: 'ping', code: 'none' }),
    ).toBe(1);
    expect(await value('isa_ping_up', prod)).toBe(0);
    expect(await value('isa_ping_last_duration_seconds', prod)).toBe(10);
    expect(await value('isa_ping_last_attempt_timestamp_seconds', prod)).toBe(T0 / 1000 + 60);
    expect(
      await value('isa_check_runs_total', { ...prod, check: 'ping', outcome: 'fail' }),
    ).toBeUndefined();
  });

  it('records 401 as unauthorized and flips up back and forth with the last ping', async () => {
    recorder.recordResult(pingResult('ok'));
    recorder.recordResult(pingResult('unauthorized', { startedAt: T0 + 60_000 }));
    expect(await value('isa_ping_attempts_total', { ...prod, result: 'unauthorized' })).toBe(1);
    expect(await value('isa_ping_attempts_total', { ...prod, result: 'ok' })).toBe(1);
    expect(
      await value('isa_http_responses_total', { ...prod, operation: 'ping', code: '401' }),
    ).toBe(1);
    expect(await value('isa_ping_up', prod)).toBe(0);
    expect(await value('isa_ping_last_duration_seconds', prod)).toBeCloseTo(0.08);
    recorder.recordResult(pingResult('ok', { startedAt: T0 + 120_000 }));
    expect(await value('isa_ping_up', prod)).toBe(1);
    expect(await value('isa_ping_duration_seconds', prod, 'isa_ping_duration_seconds_count')).toBe(
      3,
    );
  });

  it('records an unexpected HTTP status such as 418 under its own code', async () => {
    recorder.recordResult(pingResult('teapot'));
    expect(
      await value('isa_http_responses_total', { ...prod, operation: 'ping', code: '418' }),
    ).toBe(1);
    expect(await value('isa_ping_attempts_total', { ...prod, result: 'unexpected_status' })).toBe(
      1,
    );
  });

  it('keeps environments apart', async () => {
    recorder.recordResult(pingResult('timeout', { environment: 'sandbox' }));
    expect(
      await value('isa_ping_attempts_total', { environment: 'sandbox', result: 'timeout' }),
    ).toBe(1);
    expect(await value('isa_ping_attempts_total', { ...prod, result: 'timeout' })).toBe(0);
    expect(await value('isa_ping_up', { environment: 'sandbox' })).toBe(0);
    expect(await value('isa_ping_up', prod)).toBeUndefined();
  });
});

describe('Recorder.recordResult: lifecycle', () => {
  it('records a successful run: result, steps, polls, qualify outcome and duration, last success', async () => {
    const result = lifecycleResult('success');
    recorder.recordResult(result);
    expect(await value('isa_lifecycle_runs_total', { ...prod, result: 'success' })).toBe(1);
    const step = 'isa_lifecycle_step_duration_seconds';
    expect(await value(step, { ...prod, step: 'create' }, `${step}_sum`)).toBeCloseTo(0.3);
    expect(await value(step, { ...prod, step: 'poll' }, `${step}_sum`)).toBeCloseTo(23.7);
    expect(await value(step, { ...prod, step: 'verify_gone' }, `${step}_count`)).toBe(1);
    expect(await value('isa_qualify_polls_total', { ...prod, status: 'pending' })).toBe(2);
    expect(await value('isa_qualify_polls_total', { ...prod, status: 'available' })).toBe(1);
    expect(await value('isa_qualify_polls_total', { ...prod, status: 'retry_later' })).toBe(0);
    expect(await value('isa_qualify_outcomes_total', { ...prod, status: 'available' })).toBe(1);
    const q = 'isa_qualify_duration_seconds';
    expect(await value(q, { ...prod, le: 20 }, `${q}_bucket`)).toBe(0);
    expect(await value(q, { ...prod, le: 25 }, `${q}_bucket`)).toBe(1);
    // The time the run finished: start + duration.
    expect(await value('isa_lifecycle_last_success_timestamp_seconds', prod)).toBe(
      (T0 + 25_000) / 1000,
    );
    expect(
      await value('isa_http_responses_total', { ...prod, operation: 'poll_services', code: '200' }),
    ).toBe(2);
    expect(
      await value('isa_http_responses_total', { ...prod, operation: 'verify_gone', code: '410' }),
    ).toBe(1);
    expect(
      await value('isa_contract_checks_total', {
        ...prod,
        check: 'closed_session_gone',
        result: 'pass',
      }),
    ).toBe(1);
    expect(
      await value('isa_service_data_set_info', { ...prod, service_data_set: '20240501' }),
    ).toBe(1);
    expect(
      await value('isa_check_runs_total', { ...prod, check: 'lifecycle', outcome: 'pass' }),
    ).toBe(1);
    expect(
      await value(
        'isa_check_duration_seconds',
        { ...prod, check: 'lifecycle' },
        'isa_check_duration_seconds_count',
      ),
    ).toBe(1);
  });

  it('records a qualify timeout as timeout (unknown), never as no_service, and leaves last success alone', async () => {
    recorder.recordResult(lifecycleResult('success'));
    recorder.recordResult(lifecycleResult('qualify_timeout', { startedAt: T0 + 300_000 }));
    expect(await value('isa_lifecycle_runs_total', { ...prod, result: 'qualify_timeout' })).toBe(1);
    expect(await value('isa_qualify_outcomes_total', { ...prod, status: 'timeout' })).toBe(1);
    expect(await value('isa_qualify_outcomes_total', { ...prod, status: 'no_service' })).toBe(0);
    expect(await value('isa_qualify_polls_total', { ...prod, status: 'retry_later' })).toBe(1);
    expect(await value('isa_qualify_polls_total', { ...prod, status: 'pending' })).toBe(4);
    const q = 'isa_qualify_duration_seconds';
    expect(await value(q, { ...prod, le: 75 }, `${q}_bucket`)).toBe(1);
    expect(await value(q, { ...prod, le: 90 }, `${q}_bucket`)).toBe(2);
    expect(await value('isa_lifecycle_last_success_timestamp_seconds', prod)).toBe(
      (T0 + 25_000) / 1000,
    );
    // No data set in this run: the one seen before stays.
    expect(await samplesOf(metrics.registry, 'isa_service_data_set_info')).toEqual([
      { labels: { ...prod, service_data_set: '20240501' }, value: 1 },
    ]);
    expect(
      await value('isa_check_runs_total', { ...prod, check: 'lifecycle', outcome: 'fail' }),
    ).toBe(1);
  });

  it('records a closed session that is not gone as a failed contract check', async () => {
    recorder.recordResult(lifecycleResult('not_gone_after_close'));
    expect(
      await value('isa_lifecycle_runs_total', { ...prod, result: 'not_gone_after_close' }),
    ).toBe(1);
    expect(
      await value('isa_contract_checks_total', {
        ...prod,
        check: 'closed_session_gone',
        result: 'fail',
      }),
    ).toBe(1);
    expect(
      await value('isa_contract_checks_total', {
        ...prod,
        check: 'session_token_header',
        result: 'pass',
      }),
    ).toBe(1);
    expect(
      await value('isa_http_responses_total', { ...prod, operation: 'verify_gone', code: '200' }),
    ).toBe(1);
    // No polling happened: the step is absent, not observed as 0.
    const step = 'isa_lifecycle_step_duration_seconds';
    expect(await value(step, { ...prod, step: 'poll' }, `${step}_count`)).toBe(0);
    expect(
      await samplesOf(metrics.registry, 'isa_lifecycle_last_success_timestamp_seconds'),
    ).toEqual([]);
  });

  it('does not count a qualify outcome or duration for a run that never got one', async () => {
    const result = lifecycleResult('success');
    const failed: CheckResult = {
      ...result,
      outcome: 'fail',
      reason: 'create_failed',
      facts: {
        result: 'create_failed',
        qualifyOutcome: null,
        qualifyDurationMs: null,
        stepDurationsMs: { create: 120 },
        pollStatuses: [],
        serviceDataSet: null,
      },
      responses: [{ operation: 'create_session', code: '500' }],
      contractChecks: [],
    };
    recorder.recordResult(failed);
    expect(await value('isa_lifecycle_runs_total', { ...prod, result: 'create_failed' })).toBe(1);
    for (const status of ['available', 'no_service', 'failed', 'timeout']) {
      expect(await value('isa_qualify_outcomes_total', { ...prod, status })).toBe(0);
    }
    const q = 'isa_qualify_duration_seconds';
    expect(await value(q, prod, `${q}_count`)).toBe(0);
    expect(
      await value('isa_http_responses_total', {
        ...prod,
        operation: 'create_session',
        code: '500',
      }),
    ).toBe(1);
  });

  it('keeps exactly one data set series per environment, replacing the old one', async () => {
    recorder.recordResult(lifecycleResult('success', { serviceDataSet: '100' }));
    recorder.recordResult(
      lifecycleResult('success', { environment: 'sandbox', serviceDataSet: '7' }),
    );
    recorder.recordResult(lifecycleResult('success', { serviceDataSet: '100' }));
    recorder.recordResult(lifecycleResult('success', { serviceDataSet: '101' }));
    const series = await samplesOf(metrics.registry, 'isa_service_data_set_info');
    expect(series).toHaveLength(2);
    expect(series).toContainEqual({ labels: { ...prod, service_data_set: '101' }, value: 1 });
    expect(series).toContainEqual({
      labels: { environment: 'sandbox', service_data_set: '7' },
      value: 1,
    });
  });

  it('never turns a non-numeric data set from the API into a label value', async () => {
    recorder.recordResult(
      lifecycleResult('success', { serviceDataSet: 'https://evil.example/?token=abc' }),
    );
    expect(await samplesOf(metrics.registry, 'isa_service_data_set_info')).toEqual([
      { labels: { ...prod, service_data_set: 'invalid' }, value: 1 },
    ]);
  });
});

describe('Recorder: skips and open sessions', () => {
  it('counts skipped runs by check and reason', async () => {
    recorder.recordSkip('production', 'lifecycle', 'overlap');
    recorder.recordSkip('production', 'lifecycle', 'overlap');
    recorder.recordSkip('sandbox', 'ping', 'rate_limit_backoff');
    const skipped = 'isa_checks_skipped_total';
    expect(await value(skipped, { ...prod, check: 'lifecycle', reason: 'overlap' })).toBe(2);
    expect(await value(skipped, { ...prod, check: 'ping', reason: 'overlap' })).toBe(0);
    expect(
      await value(skipped, { environment: 'sandbox', check: 'ping', reason: 'rate_limit_backoff' }),
    ).toBe(1);
  });

  it('sets the open-session gauge, up and back to 0', async () => {
    recorder.setSessionsOpen('production', 2);
    expect(await value('isa_synthetic_sessions_open', prod)).toBe(2);
    recorder.setSessionsOpen('production', 0);
    expect(await value('isa_synthetic_sessions_open', prod)).toBe(0);
    expect(await value('isa_synthetic_sessions_open', { environment: 'sandbox' })).toBe(0);
  });

  it('adds both session families for an environment without a check that creates sessions, once its sessions are reported', async () => {
    const metrics = createMetrics({
      checks: CHECK_LIST,
      environments: [{ name: 'pingonly', checks: ['ping'] }],
      build: BUILD,
      collectDefaultMetrics: false,
    });
    const pingOnly = new Recorder(metrics);
    const env = { environment: 'pingonly' };
    const unrecoverable = 'isa_synthetic_sessions_unrecoverable_total';
    expect(await sampleValue(metrics.registry, 'isa_synthetic_sessions_open', env)).toBeUndefined();
    expect(await sampleValue(metrics.registry, unrecoverable, env)).toBeUndefined();
    // The ledger held a session of it at start-up (an earlier configuration ran lifecycle there).
    pingOnly.setSessionsOpen('pingonly', 0);
    expect(await sampleValue(metrics.registry, 'isa_synthetic_sessions_open', env)).toBe(0);
    expect(await sampleValue(metrics.registry, unrecoverable, env)).toBe(0);
    pingOnly.recordUnrecoverable('pingonly');
    pingOnly.setSessionsOpen('pingonly', 1);
    expect(await sampleValue(metrics.registry, unrecoverable, env)).toBe(1);
  });
});

describe('label values', () => {
  it('passes HTTP status codes and none through, and nothing else', () => {
    expect(statusCodeLabel('200')).toBe('200');
    expect(statusCodeLabel('418')).toBe('418');
    expect(statusCodeLabel('none')).toBe('none');
    expect(statusCodeLabel('999')).toBe('other');
    expect(statusCodeLabel('HTTP 500: boom')).toBe('other');
    expect(statusCodeLabel('')).toBe('other');
  });

  it('accepts only numeric data sets', () => {
    expect(dataSetLabel('20240501')).toBe('20240501');
    expect(dataSetLabel('12a')).toBe('invalid');
    expect(dataSetLabel('')).toBe('invalid');
    expect(dataSetLabel('1'.repeat(33))).toBe('invalid');
  });

  it('writes no label value that is not from a bounded set, a configured name, a code or a data set', async () => {
    for (const kind of ['ok', 'timeout', 'unauthorized', 'teapot'] as const) {
      recorder.recordResult(pingResult(kind));
    }
    for (const kind of ['success', 'qualify_timeout', 'not_gone_after_close'] as const) {
      recorder.recordResult(lifecycleResult(kind));
    }
    const all = await metrics.registry.getMetricsAsJSON();
    for (const metric of all) {
      for (const sample of metric.values) {
        for (const [label, v] of Object.entries(sample.labels)) {
          // No URL, path, token, message: short identifiers only.
          expect(String(v), `${metric.name}{${label}}`).toMatch(/^[A-Za-z0-9_.+-]{1,32}$/);
        }
      }
    }
  });
});

describe('Recorder: confirmation pings (follow-up runs of ping)', () => {
  it('records a confirmation ping in its own families only: scheduled series do not move', async () => {
    const before = await metrics.registry.metrics();
    const scheduledOnly = (text: string) =>
      text
        .split('\n')
        .filter((line) => !line.startsWith('#') && !line.includes('_confirm_'))
        .join('\n');
    recorder.recordResult({ ...pingResult('timeout'), followUp: true });
    expect(scheduledOnly(await metrics.registry.metrics())).toBe(scheduledOnly(before));
    expect(await value('isa_ping_confirm_attempts_total', { ...prod, result: 'timeout' })).toBe(1);
    // Observed at its elapsed time, like a scheduled timeout: above the 2.5 s bucket.
    const duration = 'isa_ping_confirm_duration_seconds';
    expect(await value(duration, { ...prod, le: 2.5 }, `${duration}_bucket`)).toBe(0);
    expect(await value(duration, { ...prod, le: 30 }, `${duration}_bucket`)).toBe(1);
    expect(await value(duration, prod, `${duration}_sum`)).toBe(10);
  });

  it('records sequence starts and ends: the active gauge and the end counter', async () => {
    expect(await value('isa_ping_confirm_active', prod)).toBe(0);
    recorder.recordFollowUp('production', 'ping', { type: 'started' });
    expect(await value('isa_ping_confirm_active', prod)).toBe(1);
    recorder.recordFollowUp('production', 'ping', { type: 'ended', end: 'recovered' });
    expect(await value('isa_ping_confirm_active', prod)).toBe(0);
    expect(await value('isa_ping_confirm_sequences_total', { ...prod, end: 'recovered' })).toBe(1);
    expect(await value('isa_ping_confirm_sequences_total', { ...prod, end: 'stopped' })).toBe(0);
  });

  it('exports confirmation series only where confirmation is on', async () => {
    const m = testMetrics([]);
    const r = new Recorder(m);
    const confirm = { intervalMs: 10_000, windowMs: 180_000, successes: 3 };
    r.describeEnvironment(testEnvironment('http://127.0.0.1:9', { name: 'quiet' }));
    r.describeEnvironment(testEnvironment('http://127.0.0.1:9', { name: 'on', ping: { confirm } }));
    const text = await m.registry.metrics();
    expect(text).not.toContain('environment="quiet",result="ok"');
    expect(text).not.toContain('isa_ping_confirm_active{environment="quiet"}');
    expect(text).toContain('isa_ping_confirm_attempts_total{environment="on",result="ok"} 0');
    expect(text).toContain('isa_ping_confirm_active{environment="on"} 0');
  });

  it('starts only the results the rules read at 0; another appears when first seen', async () => {
    const m = testMetrics([]);
    const r = new Recorder(m);
    const confirm = { intervalMs: 10_000, windowMs: 180_000, successes: 3 };
    r.describeEnvironment(testEnvironment('http://127.0.0.1:9', { name: 'on', ping: { confirm } }));
    const results = async () =>
      (await m.registry.getSingleMetric('isa_ping_confirm_attempts_total')!.get()).values.map(
        (sample) => `${String(sample.labels['result'])} ${sample.value}`,
      );
    expect(await results()).toEqual(['ok 0', 'server_error 0', 'timeout 0', 'network_error 0']);
    r.recordResult({ ...pingResult('unauthorized', { environment: 'on' }), followUp: true });
    expect(await results()).toContain('unauthorized 1');
    expect(await results()).toHaveLength(5);
  });
});
