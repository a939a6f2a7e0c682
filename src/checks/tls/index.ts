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
import { initialResults } from '../shared/request.js';
import { z } from 'zod';
import { checkSection } from '../../config/section.js';
import { certificateNotAfter, readClientKeyPair } from '../../api/client-identity.js';
import { defineCheck } from '../../kernel/check.js';
import {
  DEFAULT_MIN_DAYS,
  TLS_RESULTS,
  inspectCertificate,
  noChain,
  type TlsFacts,
} from './inspect.js';

export { TLS_RESULTS } from './inspect.js';

/** What a run finds where the base URL is not `https`: no handshake is tried. */
const NOT_HTTPS: TlsFacts = noChain('handshake_failed', 'NOT_HTTPS', 0);

const metrics = {
  tlsRuns: {
    name: 'isa_tls_runs_total',
    help: 'Certificate checks of the base URL by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(TLS_RESULTS) },
  },
  tlsExpiry: {
    name: 'isa_tls_expiry_timestamp_seconds',
    help: 'Earliest notAfter of the certificate chain the base URL presents, as Unix time; also when the chain does not verify.',
    type: 'gauge',
    labels: ['environment'],
  },
  tlsClientCertExpiry: {
    name: 'isa_tls_client_cert_expiry_timestamp_seconds',
    help: "notAfter of the environment's client certificate (client_cert_file), as Unix time, as the file holds it now.",
    type: 'gauge',
    labels: ['environment'],
  },
  tlsVerified: {
    name: 'isa_tls_verified',
    help: '1 when the chain verified (system CAs plus ca_file) and matched the host name, else 0.',
    type: 'gauge',
    labels: ['environment'],
  },
} as const;

export const tlsCheck = defineCheck({
  name: 'tls',
  // On by default where there is a certificate to look at; one handshake an hour costs nothing.
  config: checkSection({
    name: 'tls',
    defaults: {
      enabled: (environment) => environment.baseUrl.startsWith('https:'),
      interval: '1h',
      timeout: '15s',
    },
    shape: {
      min_days: z
        .number({ error: 'must be a whole number of days of at least 0' })
        .int({ error: 'must be a whole number of days of at least 0' })
        .min(0, { error: 'must be a whole number of days of at least 0' })
        .default(DEFAULT_MIN_DAYS),
    },
    docs: {
      summary:
        "the certificate check: one TLS handshake to the base URL's host, no API request, no API key, no request-budget token (docs/metrics.md, `isa_tls_*`; docs/alerts.md, `IsaTlsCertificateExpiring`, `IsaTlsCertificateInvalid`)",
      default: 'on for an `https` base URL, off for `http`',
      keys: {
        enabled: {
          default: '`true` for `https`, `false` for `http`',
          meaning:
            'switched on for an `http` base URL, every run fails as `handshake_failed` (`NOT_HTTPS`)',
        },
        request_timeout: { meaning: 'bounds the handshake' },
        min_days: {
          type: 'integer',
          meaning:
            'at least 0; a run whose chain ends sooner fails as `expiring` (the alert rules ticket at 21 days and page at 3, whatever this is)',
        },
      },
    },
    toConfig: (parsed) => ({ minDays: parsed.min_days }),
  }),
  metrics,
  operations: {},
  contractChecks: [],
  usesApiKey: false,
  summaryKeys: ['result', 'expires_at', 'days_left', 'verified'],
  async run(ctx) {
    const { baseUrl, extraTrust, proxy, clientCertificate } = ctx.environment;
    // Read again each run: the file may have been rotated since the last one.
    const keyPair = clientCertificate
      ? await readClientKeyPair(clientCertificate).catch(() => null)
      : null;
    const clientCertNotAfter = keyPair ? certificateNotAfter(keyPair.cert) : null;
    if (!baseUrl.startsWith('https:')) {
      // Switched on for a plain-HTTP base URL: no TLS there, so no handshake can succeed.
      const facts = { ...NOT_HTTPS, clientCertNotAfter };
      return { outcome: 'fail', reason: 'handshake_failed: NOT_HTTPS', facts };
    }
    const inspected = await inspectCertificate({
      url: baseUrl,
      ca: extraTrust,
      ...(proxy ? { proxy } : {}),
      ...(keyPair ? { clientKeyPair: keyPair } : {}),
      timeoutMs: ctx.config.requestTimeoutMs,
      signal: ctx.signal,
      minDays: ctx.config.minDays,
    });
    const facts: TlsCheckFacts = { ...inspected, clientCertNotAfter };
    return {
      outcome: facts.result === 'ok' ? 'pass' : 'fail',
      reason: facts.result === 'ok' ? null : describe(facts),
      facts,
    };
  },
  summary: (facts) => ({
    result: facts?.result ?? null,
    expires_at:
      facts?.earliestNotAfter == null
        ? null
        : new Date(facts.earliestNotAfter * 1000).toISOString(),
    // Whole days left, as a person counts them; the result is judged on the exact time.
    days_left: facts?.daysLeft == null ? null : Math.floor(facts.daysLeft),
    verified: facts?.verified ?? null,
  }),
  trace: (facts) => {
    if (facts === null) return [];
    if (facts.earliestNotAfter === null) return [`certificate ${facts.result}`];
    const day = new Date(facts.earliestNotAfter * 1000).toISOString().slice(0, 10);
    const verified = facts.verified ? 'verified' : 'not verified';
    const days = Math.floor(facts.daysLeft ?? 0);
    return [`certificate ${facts.result}: expires ${day} (${days} days), ${verified}`];
  },
  record(facts, sink) {
    sink.inc(metrics.tlsRuns, { result: facts.result });
    // A run that read no chain leaves the last known expiry: the certificate did not change.
    if (facts.earliestNotAfter !== null) sink.set(metrics.tlsExpiry, {}, facts.earliestNotAfter);
    if (facts.clientCertNotAfter != null) {
      sink.set(metrics.tlsClientCertExpiry, {}, facts.clientCertNotAfter);
    }
    // Nothing verified without a handshake; a network failure, a timeout or a proxy that refused
    // says nothing about it.
    const reached = !['network_error', 'timeout', 'proxy_error'].includes(facts.result);
    if (reached) {
      sink.set(metrics.tlsVerified, {}, facts.verified ? 1 : 0);
    }
  },
});

/**
 * What a run found: the partner's chain, and the `notAfter` of the environment's client
 * certificate (null without one, or when its files could not be read this run).
 */
export type TlsCheckFacts = TlsFacts & { clientCertNotAfter?: number | null };

/** The run's failure reason: the result and its bounded code (never a message). */
function describe(facts: TlsFacts): string {
  return facts.reason === null ? facts.result : `${facts.result}: ${facts.reason}`;
}
