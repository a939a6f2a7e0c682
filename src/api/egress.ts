/**
 * The API client's pools, as an environment's egress settings shape them (docs/configuration.md,
 * "Egress proxy" and "Client certificates"):
 *
 * - no proxy: a measuring pool of the partner's origin (`timing.ts`);
 * - a proxy and an `http` target: a measuring pool of the proxy's origin, to which requests are
 *   written in absolute form (`GET http://partner/path`), so `connect` is the TCP handshake with
 *   the proxy;
 * - a proxy and an `https` target: a pool of the partner's origin whose connections are CONNECT
 *   tunnels (`tunnel.ts`), TLS inside, so `connect` runs to the tunnel's `200` and `tls` is the
 *   handshake with the partner.
 *
 * The TLS options (`ca_file`, the client certificate) are read at each new connection, so a
 * rotated client certificate applies from the next connection on.
 */
import type { Pool, buildConnector } from 'undici';
import type { ClientIdentity } from './client-identity.js';
import type { ProxyRoute } from './proxy.js';
import { ProxyError, createTunnelConnector } from './tunnel.js';
import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  UndiciPool,
  createMeasuringConnector,
  type MeasuringAgentOptions,
} from './timing.js';

export interface EgressOptions {
  /** The partner's origin. */
  origin: string;
  /** The route through the proxy, or null for a direct connection. */
  route: ProxyRoute | null;
  /** Certificate authorities of the TLS connections (system roots plus `ca_file`), if any. */
  ca?: readonly string[];
  identity?: ClientIdentity;
  /**
   * Counts connections waiting for the proxy (its TCP handshake, its answer to CONNECT), so that
   * a call whose deadline passes meanwhile is reported as the proxy's timeout (`client.ts`).
   */
  awaiting: { tunnels: number };
  /** Further undici pool options (tests). */
  pool?: Omit<MeasuringAgentOptions, 'connect'>;
}

/** Whether requests to `origin` are written to the proxy in absolute form (an `http` target). */
export function forwardsThroughProxy(origin: string, route: ProxyRoute | null): boolean {
  return route !== null && origin.startsWith('http:');
}

/** A pool for one kind of call (kept alive, or a new connection each) of one environment. */
export function createEgressPool(options: EgressOptions): Pool {
  const forward = forwardsThroughProxy(options.origin, options.route);
  const poolOrigin = forward && options.route ? options.route.origin : options.origin;
  const connect = rotatingConnector(options, forward);
  return new UndiciPool(poolOrigin, { ...options.pool, connect });
}

/** The TLS options of a new connection: the trusted CAs and the current client certificate. */
function tlsOptions(options: EgressOptions): buildConnector.BuildOptions {
  return {
    ...(options.ca !== undefined && options.ca.length > 0 ? { ca: [...options.ca] } : {}),
    ...(options.identity ? options.identity.pair : {}),
  };
}

/**
 * The connector of the pool, rebuilt when the client certificate changed (a connector fixes its
 * TLS options when it is built, and keeps a TLS session cache that belongs to them).
 */
function rotatingConnector(options: EgressOptions, forward: boolean): buildConnector.connector {
  const build = (): buildConnector.connector => {
    const route = options.route;
    if (route === null) return createMeasuringConnector(tlsOptions(options));
    if (forward) return proxyLeg(createMeasuringConnector({}), options.awaiting);
    return createTunnelConnector(
      route,
      { timeoutMs: DEFAULT_CONNECT_TIMEOUT_MS, tls: () => tlsOptions(options) },
      options.awaiting,
    );
  };
  let version = options.identity?.version ?? 0;
  let current = build();
  return (connectOptions, callback) => {
    const now = options.identity?.version ?? 0;
    if (now !== version) {
      version = now;
      current = build();
    }
    current(connectOptions, callback);
  };
}

/**
 * The TCP connection to the proxy of absolute-form requests: counted while it is being made, and
 * its failure named as the proxy's (`PROXY_UNREACHABLE`, `PROXY_TIMEOUT`), not the partner's.
 */
function proxyLeg(
  connector: buildConnector.connector,
  awaiting: { tunnels: number },
): buildConnector.connector {
  return (connectOptions, callback) => {
    awaiting.tunnels++;
    connector(connectOptions, (err, socket) => {
      awaiting.tunnels--;
      if (err === null) {
        callback(null, socket);
        return;
      }
      const code = (err as { code?: unknown }).code;
      const proxyError =
        code === 'UND_ERR_CONNECT_TIMEOUT'
          ? new ProxyError('PROXY_TIMEOUT', 'no connection to the proxy in time', { cause: err })
          : new ProxyError('PROXY_UNREACHABLE', 'no connection to the proxy', { cause: err });
      callback(proxyError, null);
    });
  };
}
