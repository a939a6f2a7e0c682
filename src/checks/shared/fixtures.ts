/**
 * What the check folders' test fixtures share (each `src/checks/<name>/fixtures.ts`): results a
 * run could produce, built by hand, for the tests that need every registered check's (the golden
 * metric set, promtool's check of /metrics; docs/architecture.md, "Adding a check"). Nothing the
 * daemon runs imports them.
 */
import type { CheckResult, StepRecord } from '../../kernel/check.js';

/** 2024-05-01T12:00:00Z */
export const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

/** Where and when a fixture's run happened: production at T0 unless given. */
export interface FixtureOptions {
  environment?: string;
  startedAt?: number;
}

/**
 * A check's fixtures: `sampleResults` are results of one environment that, recorded together,
 * give each of the check's own metric families at least one sample.
 */
export interface CheckFixtures {
  sampleResults(environment: string): CheckResult[];
}

export function step(partial: Partial<StepRecord> & { name: string }): StepRecord {
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

/** A passing run of a check that makes one request per step, as `<check>` Results share it. */
export function passingRun<Facts>(
  check: string,
  facts: Facts,
  steps: Array<{
    name: string;
    path: string;
    operation: CheckResult['responses'][number]['operation'];
  }>,
  opts: FixtureOptions,
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
