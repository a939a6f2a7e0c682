/**
 * The analytics check's test fixtures: one page synced (src/checks/shared/fixtures.ts).
 */
import type { CheckResult } from '../../kernel/check.js';
import { passingRun, type CheckFixtures, type FixtureOptions } from '../shared/fixtures.js';
import type { AnalyticsFacts } from './index.js';

/** An analytics Result: one page synced, one session appeared (lag 45 s), one still awaited. */
export function analyticsResult(opts: FixtureOptions = {}): CheckResult<AnalyticsFacts> {
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

export const fixtures: CheckFixtures = {
  sampleResults: (environment) => [analyticsResult({ environment })],
  config: {
    // Off unless configured.
    defaults: {
      enabled: false,
      intervalMs: 60_000,
      timeoutMs: 45_000,
      requestTimeoutMs: 10_000,
      initialWindowMs: 3_600_000,
      maxPages: 10,
      maxLookups: 5,
      ingestLagBoundMs: 300_000,
      ingestTimeoutMs: 1_800_000,
    },
    configured: {
      file: {
        enabled: true,
        interval: '2m',
        timeout: '1m',
        request_timeout: '5s',
        initial_window: '2h',
        max_pages: 4,
        max_lookups: 2,
        ingest_lag_bound: '10m',
        ingest_timeout: '1h',
      },
      config: {
        enabled: true,
        intervalMs: 120_000,
        timeoutMs: 60_000,
        requestTimeoutMs: 5_000,
        initialWindowMs: 7_200_000,
        maxPages: 4,
        maxLookups: 2,
        ingestLagBoundMs: 600_000,
        ingestTimeoutMs: 3_600_000,
      },
    },
    // Off, as in a file that does not mention it; short settings for the tests that enable it.
    test: { intervalMs: 10_000, timeoutMs: 8_000, requestTimeoutMs: 2_000 },
    // A 4 s interval lets 16 runs share a minute: three analytics requests each stay within the
    // API's 60 a minute.
    endToEnd: () => ({
      enabled: true,
      interval: '4s',
      timeout: '3s',
      request_timeout: '1s',
      max_pages: 2,
      max_lookups: 1,
    }),
  },
};
