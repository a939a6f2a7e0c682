/**
 * The certificate check: the chain an environment's `https` base URL presents, read with one TLS
 * handshake (`inspect.ts`) and no API request, so it needs no API key and takes no request-budget
 * token. It reports the earliest `notAfter` of the chain (also when the chain does not verify: an
 * untrusted or mismatched certificate still ends on a known day), whether the chain verifies
 * against the system's CAs plus the environment's `ca_file` and matches the host name, and one
 * result of `TLS_RESULTS`.
 *
 * An expired partner certificate is a total and predictable outage: the rules ticket three weeks
 * ahead and page for production when the certificate has expired, is not trusted, does not match
 * the host name, or has under three days left (docs/alerts.md, "The alerts").
 */
import { defineCheck } from '../../kernel/check.js';
import { section } from './config.js';
import { metrics, recordTls } from './metrics.js';
import { tlsSummary, tlsTrace } from './presentation.js';
import { runTls } from './run.js';

export { TLS_RESULTS } from './inspect.js';
export type { TlsCheckFacts } from './facts.js';

export const tlsCheck = defineCheck({
  name: 'tls',
  config: section,
  metrics,
  operations: {},
  contractChecks: [],
  usesApiKey: false,
  summaryKeys: ['result', 'expires_at', 'days_left', 'verified'],
  run: runTls,
  summary: tlsSummary,
  trace: tlsTrace,
  record: recordTls,
});
