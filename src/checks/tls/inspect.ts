/**
 * What the certificate chain of an `https` URL says, read the way a client sees it: one TLS
 * handshake to the URL's host and port, with the host name as SNI, and nothing sent after it.
 *
 * The handshake does not stop at a chain that fails verification (`rejectUnauthorized: false`):
 * a monitor must still read when an untrusted or expired certificate ends, so verification is
 * done on the side (`authorized` against the system's roots plus the extra CAs, and the host name
 * with `tls.checkServerIdentity`) and becomes the result instead of an error.
 *
 * `classifyCertificate` is the pure part: from what was read and a clock to one result. The
 * order is: expired beats everything once the chain was read (an expired certificate also fails
 * verification, and "expired" says why), then a host name that does not match, then a chain that
 * does not verify, then an expiry closer than `minDays`.
 */
import { isIP, type Socket } from 'node:net';
import {
  checkServerIdentity,
  connect,
  type DetailedPeerCertificate,
  type PeerCertificate,
  type TLSSocket,
} from 'node:tls';
import { withSystemRoots } from '../../api/client.js';
import type { ClientKeyPair } from '../../api/client-identity.js';
import { proxyRouteFor, type ProxySettings } from '../../api/proxy.js';
import { errorCode } from '../../api/transport-errors.js';
import { ProxyError, openTunnel } from '../../api/tunnel.js';

/** How a look at a certificate chain ends; each is a value of the `result` label. */
export const TLS_RESULTS = [
  'ok',
  'expiring',
  'expired',
  'untrusted',
  'hostname_mismatch',
  'handshake_failed',
  'network_error',
  'timeout',
  'proxy_error',
] as const;
export type TlsResult = (typeof TLS_RESULTS)[number];

/** Days before the earliest expiry under which a chain counts as `expiring`, by default. */
export const DEFAULT_MIN_DAYS = 14;

const DAY_SECONDS = 86_400;
const DEFAULT_HTTPS_PORT = 443;

/** The chain as read from a completed handshake, before any clock or threshold is applied. */
export interface ChainObservation {
  /** Certificates presented (and completed from the trust store), leaf first. */
  chainLength: number;
  /** The earliest `notAfter` of the chain, as Unix seconds. */
  earliestNotAfter: number;
  /** The chain verified against the trusted CAs (expiry included). */
  authorized: boolean;
  /** Why it did not verify: OpenSSL's code, e.g. `SELF_SIGNED_CERT_IN_CHAIN`; null if it did. */
  authorizationError: string | null;
  /** The leaf certificate covers the URL's host name (or IP address). */
  hostnameMatches: boolean;
  /** Why it does not: Node's code, e.g. `ERR_TLS_CERT_ALTNAME_INVALID`; null if it does. */
  hostnameError: string | null;
}

export interface TlsFacts {
  result: TlsResult;
  /**
   * A stable code behind a failing result, never a message: the connection error's code
   * (`ECONNREFUSED`, `ERR_SSL_WRONG_VERSION_NUMBER`), `TIMEOUT` or `ABORTED`, the verification
   * code (`CERT_HAS_EXPIRED`, `SELF_SIGNED_CERT_IN_CHAIN`, `ERR_TLS_CERT_ALTNAME_INVALID`).
   * Null for `ok` and `expiring`, whose result says it all.
   */
  reason: string | null;
  /** The earliest `notAfter` in the presented chain, Unix seconds; null when none was read. */
  earliestNotAfter: number | null;
  /** From `now` to `earliestNotAfter`, in days (fractional; negative once expired). */
  daysLeft: number | null;
  /** The chain verified and the host name matched: what a client would accept. */
  verified: boolean;
  authorized: boolean;
  authorizationError: string | null;
  /** Null when no certificate was read. */
  hostnameMatches: boolean | null;
  hostnameError: string | null;
  chainLength: number;
  /** From the start of the connection to the end of the handshake (or the failure). */
  durationMs: number;
}

export interface InspectOptions {
  /** An `https:` URL; its host and port are inspected (path, query and credentials ignored). */
  url: string;
  /** PEM certificate authorities trusted besides the system's (an environment's `ca_file`). */
  ca?: readonly string[];
  /**
   * The environment's egress proxy: the handshake then runs inside a CONNECT tunnel, so the chain
   * read is the partner's, as the API client sees it (docs/configuration.md, "Egress proxy").
   */
  proxy?: ProxySettings;
  /** The client certificate presented, as the API client presents it. */
  clientKeyPair?: ClientKeyPair;
  /** Deadline of connection and handshake together. */
  timeoutMs: number;
  /** Ends the look early; it then ends as `timeout` with the reason `ABORTED`. */
  signal?: AbortSignal;
  /** `expiring` under this many days left. Default `DEFAULT_MIN_DAYS`. */
  minDays?: number;
  /** Wall clock in ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

/**
 * Classifies a chain that was read: `expired` when its earliest `notAfter` is not after `now`
 * (Unix seconds), else `hostname_mismatch`, `untrusted`, then `expiring` when fewer than
 * `minDays` days are left, else `ok`.
 */
export function classifyCertificate(
  chain: ChainObservation,
  at: { nowSeconds: number; minDays: number },
): { result: TlsResult; reason: string | null; daysLeft: number } {
  const daysLeft = (chain.earliestNotAfter - at.nowSeconds) / DAY_SECONDS;
  if (chain.earliestNotAfter <= at.nowSeconds) {
    return { result: 'expired', reason: 'CERT_HAS_EXPIRED', daysLeft };
  }
  if (!chain.hostnameMatches) {
    return {
      result: 'hostname_mismatch',
      reason: chain.hostnameError ?? 'ERR_TLS_CERT_ALTNAME_INVALID',
      daysLeft,
    };
  }
  if (!chain.authorized) {
    return { result: 'untrusted', reason: chain.authorizationError ?? 'UNTRUSTED', daysLeft };
  }
  if (daysLeft < at.minDays) return { result: 'expiring', reason: null, daysLeft };
  return { result: 'ok', reason: null, daysLeft };
}

/** What a look that read no chain found: its result, its bounded code and how long it took. */
export function noChain(result: NoChainResult, reason: string, durationMs: number): TlsFacts {
  return {
    result,
    reason,
    earliestNotAfter: null,
    daysLeft: null,
    verified: false,
    authorized: false,
    authorizationError: null,
    hostnameMatches: null,
    hostnameError: null,
    chainLength: 0,
    durationMs,
  };
}

/**
 * Opens one TLS connection to the URL's host and port, reads the chain it presents and
 * classifies it (see `classifyCertificate`). Never throws for network or TLS failures: they come
 * back as `network_error` (no TCP connection), `handshake_failed` (connected, no TLS session),
 * or `timeout`. Throws only for an argument that is not usable (a URL that is not `https:`).
 */
export async function inspectCertificate(options: InspectOptions): Promise<TlsFacts> {
  const target = targetOf(options.url);
  if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0) {
    throw new RangeError('timeoutMs must be a positive number');
  }
  const minDays = options.minDays ?? DEFAULT_MIN_DAYS;
  const now = options.now ?? Date.now;
  const startedAt = performance.now();
  const outcome = await handshake(target, options);
  const durationMs = performance.now() - startedAt;
  if (outcome.kind === 'failed') return noChain(outcome.result, outcome.reason, durationMs);
  const chain = outcome.chain;
  const classified = classifyCertificate(chain, { nowSeconds: now() / 1000, minDays });
  return {
    ...classified,
    earliestNotAfter: chain.earliestNotAfter,
    verified: chain.authorized && chain.hostnameMatches,
    authorized: chain.authorized,
    authorizationError: chain.authorizationError,
    hostnameMatches: chain.hostnameMatches,
    hostnameError: chain.hostnameError,
    chainLength: chain.chainLength,
    durationMs,
  };
}

/** The results of a look that read no chain. */
type NoChainResult = 'handshake_failed' | 'network_error' | 'timeout' | 'proxy_error';

interface Target {
  /** Host name or IP address, without IPv6 brackets. */
  host: string;
  port: number;
}

type HandshakeOutcome =
  | { kind: 'read'; chain: ChainObservation }
  | { kind: 'failed'; result: NoChainResult; reason: string };

function targetOf(text: string): Target {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // The URL is not repeated: it might carry credentials.
    throw new TypeError('url is not a valid absolute URL');
  }
  if (url.protocol !== 'https:') throw new TypeError('url must use https:');
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? DEFAULT_HTTPS_PORT : Number(url.port),
  };
}

/**
 * One handshake: directly, or inside a tunnel through the proxy when one applies to the URL. A
 * proxy that refuses or does not answer ends the look as `proxy_error` with the proxy's code.
 */
async function handshake(target: Target, options: InspectOptions): Promise<HandshakeOutcome> {
  const route = proxyRouteFor(options.proxy, options.url);
  if (route === null) return handshakeOn(target, options, null);
  const startedAt = performance.now();
  try {
    const tunnel = await openTunnel({
      route,
      host: target.host,
      port: target.port,
      timeoutMs: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const left = Math.max(1, options.timeoutMs - (performance.now() - startedAt));
    return await handshakeOn(target, { ...options, timeoutMs: left }, tunnel.socket);
  } catch (err) {
    if (err instanceof ProxyError)
      return { kind: 'failed', result: 'proxy_error', reason: err.code };
    return { kind: 'failed', result: 'timeout', reason: 'ABORTED' };
  }
}

/** One handshake on a new connection or an open tunnel, settled exactly once. */
function handshakeOn(
  target: Target,
  options: InspectOptions,
  tunnel: Socket | null,
): Promise<HandshakeOutcome> {
  return new Promise((resolve) => {
    const { signal } = options;
    if (signal?.aborted) {
      tunnel?.destroy();
      resolve({ kind: 'failed', result: 'timeout', reason: 'ABORTED' });
      return;
    }
    let settled = false;
    // Through a tunnel, the partner is reached already: a failure now is the handshake's.
    let tcpConnected = tunnel !== null;
    const socket: TLSSocket = connect({
      ...(tunnel === null ? { host: target.host, port: target.port } : { socket: tunnel }),
      ...(options.clientKeyPair ?? {}),
      // SNI takes host names only; a client connecting to an IP address sends none.
      ...(isIP(target.host) === 0 ? { servername: target.host } : {}),
      ...(options.ca !== undefined && options.ca.length > 0
        ? { ca: withSystemRoots(options.ca) }
        : {}),
      rejectUnauthorized: false,
      // Node folds a host name mismatch into `authorized`; checked apart (observeChain), so that
      // `authorized` says whether the chain verified and the two problems stay distinguishable.
      checkServerIdentity: () => undefined,
    });
    const finish = (outcome: HandshakeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(outcome);
    };
    const onAbort = (): void => finish({ kind: 'failed', result: 'timeout', reason: 'ABORTED' });
    const timer = setTimeout(
      () => finish({ kind: 'failed', result: 'timeout', reason: 'TIMEOUT' }),
      options.timeoutMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      tcpConnected = true;
    });
    socket.once('secureConnect', () => {
      const chain = observeChain(socket, target.host);
      finish(
        chain === null
          ? { kind: 'failed', result: 'handshake_failed', reason: 'NO_PEER_CERTIFICATE' }
          : { kind: 'read', chain },
      );
    });
    socket.on('error', (err) => {
      // Before the TCP connection: nothing answered. After it: something answered, but not TLS
      // that this client could complete (a plain HTTP server, a protocol or cipher mismatch).
      finish({
        kind: 'failed',
        result: tcpConnected ? 'handshake_failed' : 'network_error',
        reason: errorCode(err),
      });
    });
    socket.once('close', () => {
      finish({
        kind: 'failed',
        result: tcpConnected ? 'handshake_failed' : 'network_error',
        reason: 'ECONNRESET',
      });
    });
  });
}

/** The chain of a completed handshake, or null when the server presented no certificate. */
function observeChain(socket: TLSSocket, host: string): ChainObservation | null {
  const leaf = socket.getPeerCertificate(true);
  if (!hasCertificate(leaf)) return null;
  let earliest = Number.POSITIVE_INFINITY;
  let length = 0;
  const seen = new Set<string>();
  // Each certificate names its issuer's; a self-signed root names itself, which ends the walk.
  for (
    let cert: DetailedPeerCertificate | undefined = leaf;
    cert !== undefined && hasCertificate(cert) && !seen.has(cert.fingerprint256);
    cert = cert.issuerCertificate as DetailedPeerCertificate | undefined
  ) {
    seen.add(cert.fingerprint256);
    length++;
    const notAfter = Date.parse(cert.valid_to) / 1000;
    if (Number.isFinite(notAfter)) earliest = Math.min(earliest, notAfter);
  }
  if (!Number.isFinite(earliest)) return null;
  const identityError = checkServerIdentity(host, leaf);
  return {
    chainLength: length,
    earliestNotAfter: earliest,
    authorized: socket.authorized,
    authorizationError: socket.authorized ? null : verificationCode(socket.authorizationError),
    hostnameMatches: identityError === undefined,
    hostnameError: identityError === undefined ? null : errorCode(identityError),
  };
}

/**
 * OpenSSL's verification code (`CERT_HAS_EXPIRED`): Node hands it over as a string, though typed
 * as an Error; anything that is not code-shaped becomes `UNKNOWN`.
 */
function verificationCode(error: unknown): string {
  if (typeof error === 'string') return /^[A-Z][A-Z0-9_]{1,63}$/.test(error) ? error : 'UNKNOWN';
  return errorCode(error);
}

function hasCertificate(cert: PeerCertificate | undefined): cert is DetailedPeerCertificate {
  return (
    cert !== undefined && typeof cert.fingerprint256 === 'string' && cert.fingerprint256 !== ''
  );
}
