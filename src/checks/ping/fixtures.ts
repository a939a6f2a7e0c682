/**
 * The ping check's test fixtures: pings that answered, timed out, were refused and answered 418 (src/checks/shared/fixtures.ts).
 */
import type { PhaseTimings } from '../../api/client.js';
import type { CheckResult } from '../../kernel/check.js';
import { T0, step, type CheckFixtures, type FixtureOptions } from '../shared/fixtures.js';
import type { PingFacts } from './index.js';

type PingKind = 'ok' | 'timeout' | 'unauthorized' | 'teapot';

/** A ping Result: ok (42 ms), timeout (10 s, no response), unauthorized (401), teapot (418). */
export function pingResult(kind: PingKind, opts: FixtureOptions = {}): CheckResult {
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

export const fixtures: CheckFixtures = {
  sampleResults: (environment) =>
    (['ok', 'timeout', 'unauthorized', 'teapot'] as const).map((kind) =>
      pingResult(kind, { environment }),
    ),
  config: {
    defaults: {
      enabled: true,
      intervalMs: 60_000,
      timeoutMs: 10_000,
      requestTimeoutMs: 10_000,
      connection: 'new',
      confirm: { intervalMs: 10_000, windowMs: 180_000, successes: 3 },
    },
    configured: {
      file: { enabled: false, interval: '1s', timeout: '900ms', connection: 'reuse' },
      config: {
        enabled: false,
        intervalMs: 1000,
        timeoutMs: 900,
        requestTimeoutMs: 900,
        connection: 'reuse',
        // Pings every second: confirmation, at its default 10 s, is off.
        confirm: null,
      },
    },
    // Every second; confirmation off unless a test is about confirmation pings.
    test: {
      enabled: true,
      intervalMs: 1_000,
      timeoutMs: 2_000,
      requestTimeoutMs: 2_000,
      connection: 'new',
      confirm: null,
    },
    // The contract's minute, compressed; the timeout above the 1.1 s latency the test injects.
    endToEnd: (scaled) => ({ interval: `${scaled(60_000)}ms`, timeout: '1500ms' }),
  },
  driftReads: [{ operation: 'ping', path: '/ping' }],
};
