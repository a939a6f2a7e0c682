/**
 * The tls check's test fixtures: a verified chain (src/checks/shared/fixtures.ts).
 */
import type { CheckResult } from '../../kernel/check.js';
import { passingRun, type CheckFixtures, type FixtureOptions } from '../shared/fixtures.js';
import type { TlsCheckFacts } from './index.js';

/**
 * A tls Result: a verified chain that ends on 2027-01-01, well ahead, and a client certificate
 * that ends on 2026-12-31.
 */
export function tlsResult(opts: FixtureOptions = {}): CheckResult {
  const facts: TlsCheckFacts = {
    result: 'ok',
    reason: null,
    earliestNotAfter: 1_798_761_600,
    daysLeft: 40,
    verified: true,
    authorized: true,
    authorizationError: null,
    hostnameMatches: true,
    hostnameError: null,
    chainLength: 2,
    durationMs: 12,
    clientCertNotAfter: 1_798_675_200,
  };
  return { ...passingRun('tls', facts, [], opts), contractChecks: [] };
}

export const fixtures: CheckFixtures = {
  sampleResults: (environment) => [tlsResult({ environment })],
  config: {
    // On for an https base URL.
    defaults: {
      enabled: true,
      intervalMs: 3_600_000,
      timeoutMs: 15_000,
      requestTimeoutMs: 15_000,
      minDays: 14,
    },
    configured: {
      file: { enabled: true, interval: '6h', timeout: '5s', min_days: 30 },
      config: {
        enabled: true,
        intervalMs: 21_600_000,
        timeoutMs: 5_000,
        requestTimeoutMs: 5_000,
        minDays: 30,
      },
    },
    // A handshake every few seconds, so the certificate panels have data early.
    endToEnd: () => ({ interval: '4s', timeout: '3s' }),
  },
};
