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
  config: {
    defaults: {
      enabled: true,
      intervalMs: 900_000,
      timeoutMs: 30_000,
      requestTimeoutMs: 10_000,
      geography: { states: ['CO'] },
      minProviders: 0,
    },
    configured: {
      file: {
        enabled: false,
        interval: '1h',
        timeout: '45s',
        states: ['CO', '36'],
        counties: ['08031'],
        tracts: ['08031001100'],
        blocks: ['080310011001000'],
        min_providers: 3,
      },
      config: {
        enabled: false,
        intervalMs: 3_600_000,
        timeoutMs: 45_000,
        requestTimeoutMs: 10_000,
        geography: {
          states: ['CO', '36'],
          counties: ['08031'],
          tracts: ['08031001100'],
          blocks: ['080310011001000'],
        },
        minProviders: 3,
      },
    },
    endToEnd: (scaled) => ({ interval: `${scaled(900_000)}ms`, timeout: '10s', min_providers: 1 }),
  },
  driftReads: [
    { operation: 'coverage', path: '/coverage?states%5B%5D=CO' },
    { operation: 'coverage_no_geography', path: '/coverage' },
  ],
};
