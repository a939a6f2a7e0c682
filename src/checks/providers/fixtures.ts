/**
 * The providers check's test fixtures: a changed list (src/checks/shared/fixtures.ts).
 */
import type { CheckResult } from '../../kernel/check.js';
import { passingRun, type CheckFixtures, type FixtureOptions } from '../shared/fixtures.js';
import type { ProvidersFacts } from './index.js';

/** A providers Result: 12 FCC providers and 3 supplemental brands, a changed list. */
export function providersResult(opts: FixtureOptions = {}): CheckResult<ProvidersFacts> {
  const facts: ProvidersFacts = {
    result: 'ok',
    counts: { fcc_provider: 12, supplemental_brand: 3 },
    listHash: 'a1b2c3',
    changed: true,
    violation: null,
  };
  return passingRun(
    'providers',
    facts,
    [{ name: 'providers', path: '/service_providers', operation: 'service_providers' }],
    opts,
  );
}

export const fixtures: CheckFixtures = {
  sampleResults: (environment) => [providersResult({ environment })],
  config: {
    defaults: { enabled: true, intervalMs: 900_000, timeoutMs: 30_000, requestTimeoutMs: 30_000 },
    configured: {
      file: { interval: '10m', timeout: '20s', request_timeout: '5s' },
      config: { enabled: true, intervalMs: 600_000, timeoutMs: 20_000, requestTimeoutMs: 5_000 },
    },
    endToEnd: (scaled) => ({ interval: `${scaled(900_000)}ms`, timeout: '10s' }),
  },
  driftReads: [{ operation: 'service_providers', path: '/service_providers' }],
};
