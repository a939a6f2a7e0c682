import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../../src/kernel/check.js';
import { CHECK_LIST, CHECK_NAMES, SUMMARY_KEYS } from '../../src/checks/index.js';
import { StatusHistory, toCheckJson } from '../../src/server/status.js';
import { pingCheck } from '../../src/checks/ping/index.js';
import { T0, lifecycleResult, pingResult } from '../metrics/fixtures.js';

const MINUTE = 60_000;

describe('toCheckJson', () => {
  it('prints the contract check --json document with snake_case keys', () => {
    const otherKeys = SUMMARY_KEYS.filter((key) => !pingCheck.summaryKeys.includes(key));
    // Derived from the registry: other checks are there, and their keys with them.
    expect(CHECK_NAMES).toEqual(expect.arrayContaining(['ping', 'lifecycle', 'tls']));
    expect(otherKeys).toEqual(expect.arrayContaining(['qualify_status', 'days_left']));
    expect(toCheckJson(pingResult('unauthorized'), SUMMARY_KEYS)).toEqual({
      check: 'ping',
      environment: 'production',
      outcome: 'fail',
      reason: 'unauthorized',
      latency_class: 'expected',
      connection: 'opened',
      duration_ms: 81,
      started_at: '2024-05-01T12:00:00.000Z',
      steps: [
        {
          name: 'ping',
          method: 'GET',
          path: '/ping',
          status_code: 401,
          duration_ms: 80,
          request_id: 'req-401-abc',
          error: 'HTTP 401',
        },
      ],
      contract_checks: [],
      // Every other registered check's summary keys, null: each document carries them all.
      ...Object.fromEntries(otherKeys.map((key) => [key, null])),
    });
  });

  it('carries the lifecycle verdict, contract checks and data set', () => {
    const json = toCheckJson(lifecycleResult('not_gone_after_close'), SUMMARY_KEYS);
    expect(json.qualify_status).toBe('available');
    expect(json.reason).toBe('not_gone_after_close');
    expect(json.service_data_set).toBe('20240501');
    expect(json.steps.map((s) => [s.name, s.status_code])).toEqual([
      ['create', 201],
      ['get', 200],
      ['close', 200],
      ['verify_gone', 200],
    ]);
    expect(json.contract_checks).toContainEqual({
      check: 'closed_session_gone',
      result: 'fail',
      detail: 'GET answered 200',
    });
  });

  it('is plain JSON: it survives a JSON round trip unchanged', () => {
    const json = toCheckJson(lifecycleResult('success'), SUMMARY_KEYS);
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
  });

  it('does not throw on a Result with an invalid start time', () => {
    expect(
      toCheckJson({ ...pingResult('ok'), startedAt: Number.NaN }, SUMMARY_KEYS).started_at,
    ).toBeNull();
  });
});

describe('StatusHistory', () => {
  const at = (i: number) => T0 + i * MINUTE;

  it('lists configured environments with last: null before their first run', () => {
    const history = new StatusHistory({
      checks: CHECK_LIST,
      environments: ['production', 'sandbox'],
      now: () => T0,
    });
    expect(history.snapshot()).toEqual({
      generated_at: '2024-05-01T12:00:00.000Z',
      environments: {
        production: Object.fromEntries(CHECK_NAMES.map((name) => [name, { last: null, runs: [] }])),
        sandbox: Object.fromEntries(CHECK_NAMES.map((name) => [name, { last: null, runs: [] }])),
      },
      maintenance: { production: null, sandbox: null },
      contract_drift: null,
    });
  });

  it("carries each environment's maintenance window beside its checks", () => {
    const window = {
      state: 'active' as const,
      reason: 'migration',
      start: '2024-05-01T11:00:00.000Z',
      end: '2024-05-01T13:00:00.000Z',
    };
    const history = new StatusHistory({
      checks: CHECK_LIST,
      environments: ['production', 'sandbox'],
      now: () => T0,
      maintenance: (environment) => (environment === 'production' ? window : null),
    });
    expect(history.snapshot().maintenance).toEqual({ production: window, sandbox: null });
    expect(history.snapshot({ environment: 'sandbox' }).maintenance).toEqual({ sandbox: null });
  });

  it('keeps runs per environment and check, newest first, with their steps', () => {
    const history = new StatusHistory({ checks: CHECK_LIST, now: () => at(10) });
    history.add(pingResult('ok', { startedAt: at(1) }));
    history.add(pingResult('timeout', { startedAt: at(2) }));
    history.add(pingResult('ok', { startedAt: at(3) }));
    history.add(lifecycleResult('success', { startedAt: at(2) }));
    history.add(pingResult('ok', { environment: 'sandbox', startedAt: at(4) }));
    const doc = history.snapshot();
    const ping = doc.environments.production?.ping;
    expect(ping?.runs.map((r) => [r.started_at, r.outcome])).toEqual([
      [new Date(at(3)).toISOString(), 'pass'],
      [new Date(at(2)).toISOString(), 'fail'],
      [new Date(at(1)).toISOString(), 'pass'],
    ]);
    expect(ping?.last).toEqual(toCheckJson(pingResult('ok', { startedAt: at(3) }), SUMMARY_KEYS));
    expect(ping?.runs[1]?.steps[0]?.error).toBe('headers timeout');
    expect(doc.environments.production?.lifecycle?.runs).toHaveLength(1);
    expect(doc.environments.sandbox?.ping?.runs).toHaveLength(1);
    expect(doc.environments.sandbox?.lifecycle).toBeUndefined();
  });

  it('keeps failures longer than successes', () => {
    const history = new StatusHistory({
      checks: CHECK_LIST,
      successesPerCheck: 3,
      failuresPerCheck: 5,
      now: () => at(200),
    });
    for (let i = 0; i < 4; i++) history.add(pingResult('timeout', { startedAt: at(i) }));
    for (let i = 4; i < 104; i++) history.add(pingResult('ok', { startedAt: at(i) }));
    const runs = history.snapshot().environments.production?.ping?.runs ?? [];
    // The 3 newest successes and all 4 failures, although 100 successes came after them.
    expect(runs.map((r) => r.outcome)).toEqual([
      'pass',
      'pass',
      'pass',
      'fail',
      'fail',
      'fail',
      'fail',
    ]);
    expect(runs[0]?.started_at).toBe(new Date(at(103)).toISOString());
  });

  it('bounds failures by count', () => {
    const history = new StatusHistory({
      checks: CHECK_LIST,
      successesPerCheck: 2,
      failuresPerCheck: 5,
      now: () => at(100),
    });
    for (let i = 0; i < 20; i++) history.add(pingResult('timeout', { startedAt: at(i) }));
    const runs = history.snapshot().environments.production?.ping?.runs ?? [];
    expect(runs).toHaveLength(5);
    expect(runs.at(-1)?.started_at).toBe(new Date(at(15)).toISOString());
  });

  it('drops failures older than failureMaxAgeMs, but keeps the last run', () => {
    let now = at(0);
    const history = new StatusHistory({
      checks: CHECK_LIST,
      failureMaxAgeMs: 30 * MINUTE,
      now: () => now,
    });
    const failure: CheckResult = pingResult('timeout', { startedAt: at(0) });
    history.add(failure);
    now = at(20);
    expect(history.snapshot().environments.production?.ping?.runs).toHaveLength(1);
    now = at(31);
    const status = history.snapshot().environments.production?.ping;
    expect(status?.runs).toHaveLength(0);
    expect(status?.last?.outcome).toBe('fail');
  });

  it('uses the documented defaults: 10 successes, 50 failures', () => {
    const history = new StatusHistory({ checks: CHECK_LIST, now: () => at(500) });
    for (let i = 0; i < 60; i++) history.add(pingResult('timeout', { startedAt: at(i) }));
    for (let i = 60; i < 80; i++) history.add(pingResult('ok', { startedAt: at(i) }));
    const runs = history.snapshot({ limit: 60 }).environments.production?.ping?.runs ?? [];
    expect(runs.filter((r) => r.outcome === 'pass')).toHaveLength(10);
    expect(runs.filter((r) => r.outcome === 'fail')).toHaveLength(50);
    // Without a limit, an answer carries the newest 10 of them.
    expect(history.snapshot().environments.production?.ping?.runs).toEqual(runs.slice(0, 10));
  });

  it('returns a snapshot that later runs do not change', () => {
    const history = new StatusHistory({ checks: CHECK_LIST, now: () => at(10) });
    history.add(pingResult('ok', { startedAt: at(1) }));
    const before = history.snapshot();
    const copy = JSON.parse(JSON.stringify(before)) as unknown;
    history.add(pingResult('timeout', { startedAt: at(2) }));
    expect(before).toEqual(copy);
  });
});
