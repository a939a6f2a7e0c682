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
};
