/** The certificate check's metric families, and how a run's facts become their samples. */
import type { MetricSink } from '../../kernel/check.js';
import { initialResults } from '../shared/request.js';
import type { TlsCheckFacts } from './facts.js';
import { TLS_RESULTS } from './inspect.js';

export const metrics = {
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

/** Writes a run's facts. */
export function recordTls(facts: TlsCheckFacts, sink: MetricSink): void {
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
}
