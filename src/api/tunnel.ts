/**
 * A `CONNECT` tunnel through an egress proxy (docs/configuration.md, "Egress proxy"), for `https`
 * targets: a TCP connection to the proxy, `CONNECT host:port`, and the proxy's `200` answer, after
 * which the socket carries bytes to the partner and TLS runs inside it. Used by the API client's
 * connector (`createTunnelConnector`) and by the tls check, which then sees the partner's chain.
 *
 * A proxy that refuses ends the tunnel with an error whose `code` names the proxy, never the
 * partner (`PROXY_ERROR_CODES`): 407 (or 401, which tinyproxy sends for credentials it does not
 * accept) is `PROXY_AUTH_REQUIRED`, any other answer than 2xx
 * `PROXY_REFUSED`, no TCP connection to the proxy `PROXY_UNREACHABLE`, no answer in time
 * `PROXY_TIMEOUT`.
 */
import { lookup as dnsLookup } from 'node:dns';
import { connect as netConnect, type Socket } from 'node:net';
import type { buildConnector } from 'undici';
import type { ProxyRoute } from './proxy.js';
import { buildUndiciConnector, recordConnectionTiming, type ConnectionTiming } from './timing.js';

/** The codes of a proxy's failures: each reads as the transport reason `proxy_error`. */
export const PROXY_ERROR_CODES = [
  'PROXY_AUTH_REQUIRED',
  'PROXY_REFUSED',
  'PROXY_UNREACHABLE',
  'PROXY_TIMEOUT',
] as const;
export type ProxyErrorCode = (typeof PROXY_ERROR_CODES)[number];

/** A failure of the proxy, with a stable `code` and a message that holds no credential. */
export class ProxyError extends Error {
  constructor(
    readonly code: ProxyErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProxyError';
  }
}

/** The longest CONNECT answer head read; a proxy's is a few hundred bytes. */
const MAX_ANSWER_HEAD_BYTES = 16 * 1024;

export interface TunnelOptions {
  route: ProxyRoute;
  /** The partner's host (IPv6 without brackets) and port. */
  host: string;
  port: number;
  /** Bounds the TCP connection to the proxy and its answer to CONNECT together. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** An open tunnel: the socket and when each step of it completed (monotonic ms). */
export interface Tunnel {
  socket: Socket;
  timing: ConnectionTiming;
}

/**
 * Opens a tunnel to `host:port` through the proxy. Rejects with a `ProxyError` (the proxy refused,
 * was unreachable or did not answer in time) or, on an abort, with the signal's reason.
 */
export function openTunnel(options: TunnelOptions): Promise<Tunnel> {
  const timing: ConnectionTiming = { startedAt: performance.now() };
  return new Promise<Tunnel>((resolve, reject) => {
    const socket = dialProxy(options.route, timing);
    let settled = false;
    const finish = (error: Error | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      socket.removeListener('error', onError);
      socket.removeListener('close', onClose);
      if (error === null) {
        resolve({ socket, timing });
        return;
      }
      socket.destroy();
      reject(error);
    };
    const onAbort = (): void => finish(abortReason(options.signal));
    const onError = (err: Error): void =>
      finish(
        timing.connectedAt === undefined
          ? new ProxyError('PROXY_UNREACHABLE', 'no connection to the proxy', { cause: err })
          : new ProxyError('PROXY_REFUSED', 'the proxy closed the connection', { cause: err }),
      );
    const onClose = (): void => onError(new Error('closed'));
    const timer = setTimeout(() => {
      finish(
        new ProxyError('PROXY_TIMEOUT', `no answer from the proxy within ${options.timeoutMs} ms`),
      );
    }, options.timeoutMs);
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('error', onError);
    socket.once('close', onClose);
    socket.once('connect', () => {
      timing.connectedAt = performance.now();
      socket.write(connectRequest(options));
      readAnswerHead(socket, (status, rest) => {
        if (status === null) return finish(new ProxyError('PROXY_REFUSED', 'not an HTTP answer'));
        // 407, or 401 as tinyproxy answers credentials it does not accept.
        if (status === 407 || status === 401) {
          return finish(
            new ProxyError('PROXY_AUTH_REQUIRED', `the proxy answered CONNECT ${status}`),
          );
        }
        if (status < 200 || status > 299) {
          return finish(new ProxyError('PROXY_REFUSED', `the proxy answered CONNECT ${status}`));
        }
        timing.tunnelAt = performance.now();
        if (rest.length > 0) socket.unshift(rest);
        finish(null);
      });
    });
  });
}

/** The TCP connection to the proxy, stamped like the measuring connector stamps its sockets. */
function dialProxy(route: ProxyRoute, timing: ConnectionTiming): Socket {
  const socket = netConnect({
    host: route.host,
    port: route.port,
    lookup: (hostname, lookupOptions, callback) => {
      timing.lookupStartedAt ??= performance.now();
      dnsLookup(hostname, lookupOptions, callback);
    },
  });
  socket.setNoDelay(true);
  socket.once('lookup', () => {
    timing.resolvedAt ??= performance.now();
  });
  socket.once('connectionAttempt', () => {
    timing.attemptedAt ??= performance.now();
  });
  return socket;
}

/** `CONNECT host:port HTTP/1.1` with `Host`, credentials and `proxy_connect_header`. */
function connectRequest(options: TunnelOptions): string {
  const authority = `${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`;
  const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
  if (options.route.authorization !== null) {
    lines.push(`Proxy-Authorization: ${options.route.authorization}`);
  }
  for (const [name, values] of Object.entries(options.route.connectHeaders)) {
    for (const value of values) lines.push(`${name}: ${value}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * Reads the proxy's answer head (up to the blank line) and hands over its status, null when it is
 * not an HTTP status line, and the bytes after it, which belong to the tunnel.
 */
function readAnswerHead(socket: Socket, done: (status: number | null, rest: Buffer) => void): void {
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0 && head.length < MAX_ANSWER_HEAD_BYTES) return;
    socket.removeListener('data', onData);
    socket.pause();
    const statusLine = head.subarray(0, Math.max(0, head.indexOf('\r\n'))).toString('latin1');
    const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    done(match ? Number(match[1]) : null, end < 0 ? Buffer.alloc(0) : head.subarray(end + 4));
  };
  socket.on('data', onData);
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('aborted');
}

/**
 * An undici connector for an `https` origin reached through the proxy: the tunnel, then TLS inside
 * it with undici's own connector (`httpSocket`), with `tls` options read at each new connection
 * (a rotated client certificate applies to the next one). The TLS socket is stamped for the
 * client's phases (`timing.ts`): `connect` runs from the first attempt to the proxy to the
 * tunnel's `200`, `tls` from there to the partner's handshake.
 */
export function createTunnelConnector(
  route: ProxyRoute,
  options: { timeoutMs: number; tls: () => buildConnector.BuildOptions },
  awaiting: { tunnels: number },
): buildConnector.connector {
  return (connectOptions, callback) => {
    awaiting.tunnels++;
    let counted = true;
    const uncount = (): void => {
      if (counted) awaiting.tunnels--;
      counted = false;
    };
    const port = Number(connectOptions.port) || 443;
    openTunnel({ route, host: connectOptions.hostname, port, timeoutMs: options.timeoutMs }).then(
      ({ socket: tunnelSocket, timing }) => {
        uncount();
        // Through a proxy, `connect` ends when the tunnel is open (module comment).
        const stamped: ConnectionTiming = { ...timing, connectedAt: timing.tunnelAt };
        const secure = buildUndiciConnector({ ...options.tls(), timeout: 0 });
        const tlsSocket = secure({ ...connectOptions, httpSocket: tunnelSocket }, (err, socket) => {
          if (err === null) {
            stamped.secureAt = performance.now();
            callback(null, socket as Socket);
            return;
          }
          tunnelSocket.destroy();
          callback(err, null);
        }) as unknown as Socket;
        recordConnectionTiming(tlsSocket, stamped);
      },
      (err: unknown) => {
        uncount();
        callback(err instanceof Error ? err : new Error(String(err)), null);
      },
    );
  };
}
