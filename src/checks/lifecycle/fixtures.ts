/**
 * The lifecycle check's test fixtures: a run that succeeded, one that timed out qualifying and one whose closed session was not gone (src/checks/shared/fixtures.ts).
 */
import type { CheckResult, StepRecord } from '../../kernel/check.js';
import { T0, step, type CheckFixtures } from '../shared/fixtures.js';
import type { LifecycleFacts } from './index.js';

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

/**
 * The addresses of the configured section: the file spells them as the config holds them, the
 * optional fields of the second left out.
 */
const CONFIGURED_ADDRESSES = [
  {
    street1: '2 Pending Ave',
    street2: 'Apt 4',
    city: 'Denver',
    state: 'CO',
    zip: '80202-1234',
    expect: 'no_service',
  },
  { street1: '3 Main St', city: 'Denver', state: 'CO', expect: 'any' },
];

export const fixtures: CheckFixtures = {
  sampleResults: (environment) =>
    (['success', 'qualify_timeout', 'not_gone_after_close'] as const).map((kind) =>
      lifecycleResult(kind, { environment }),
    ),
  config: {
    // Enabled by default, and an enabled lifecycle needs its addresses.
    minimal: { addresses: [{ street1: '123 Main St', zip: '80202' }] },
    defaults: {
      enabled: true,
      intervalMs: 300_000,
      timeoutMs: 120_000,
      requestTimeoutMs: 10_000,
      pollIntervalMs: 2_000,
      pollTimeoutMs: 90_000,
      campaignId: 'isa-monitor-synthetic',
      addresses: [{ street1: '123 Main St', zip: '80202', expect: 'available' }],
    },
    configured: {
      file: {
        interval: '2s',
        timeout: '1500ms',
        poll_interval: '100ms',
        poll_timeout: '1s',
        campaign_id: 'ci-run',
        addresses: CONFIGURED_ADDRESSES,
      },
      config: {
        enabled: true,
        intervalMs: 2000,
        timeoutMs: 1500,
        // the 10s default, capped at the run's timeout
        requestTimeoutMs: 1500,
        pollIntervalMs: 100,
        pollTimeoutMs: 1000,
        campaignId: 'ci-run',
        addresses: CONFIGURED_ADDRESSES,
      },
    },
    // Polls every 50 ms: a session the simulator qualifies in 150 ms takes a few polls.
    test: {
      enabled: true,
      intervalMs: 10_000,
      timeoutMs: 8_000,
      requestTimeoutMs: 2_000,
      pollIntervalMs: 50,
      pollTimeoutMs: 3_000,
      campaignId: 'isa-monitor-test',
      addresses: [{ street1: '2 Pending Ave', zip: '80202', expect: 'available' }],
    },
    endToEnd: (scaled) => ({
      interval: `${scaled(300_000)}ms`,
      timeout: `${scaled(240_000)}ms`,
      poll_interval: '100ms',
      poll_timeout: `${scaled(90_000)}ms`,
      addresses: [{ street1: '2 Pending Ave', zip: '80202', expect: 'available' }],
    }),
  },
};
