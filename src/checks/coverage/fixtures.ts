/**
 * The coverage check's test fixtures: an answer with 4 providers (src/checks/shared/fixtures.ts).
 */
import type { CheckResult } from '../../kernel/check.js';
import { passingRun, type CheckFixtures, type FixtureOptions } from '../shared/fixtures.js';
import type { CoverageFacts } from './index.js';

/** A coverage Result: 4 providers, and the request without geography refused with a 400. */
export function coverageResult(
  opts: FixtureOptions = {},
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

export const fixtures: CheckFixtures = {
  sampleResults: (environment) => [coverageResult({ environment })],
};
