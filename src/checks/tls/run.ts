/**
 * A certificate check run: the client certificate's expiry as its files hold it now, then one TLS
 * handshake to the base URL (`inspect.ts`), judged against `min_days`.
 */
import { certificateNotAfter, readClientKeyPair } from '../../api/client-identity.js';
import type { CheckConfigBase } from '../../config/section.js';
import type { CheckContext, CheckOutcome } from '../../kernel/check.js';
import type { TlsCheckFacts } from './facts.js';
import { inspectCertificate, noChain, type TlsFacts } from './inspect.js';

/** What a run finds where the base URL is not `https`: no handshake is tried. */
const NOT_HTTPS: TlsFacts = noChain('handshake_failed', 'NOT_HTTPS', 0);

/** One run of the check. */
export async function runTls(
  ctx: CheckContext<CheckConfigBase & { minDays: number }>,
): Promise<CheckOutcome<TlsCheckFacts>> {
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
}

/** The run's failure reason: the result and its bounded code (never a message). */
function describe(facts: TlsFacts): string {
  return facts.reason === null ? facts.result : `${facts.result}: ${facts.reason}`;
}
