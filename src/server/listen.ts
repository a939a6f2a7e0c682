/**
 * The daemon's server socket, bounded (docs/deploy.md, "Listener limits"). It listens on 0.0.0.0
 * by default, so anything on the network can open connections to it; 21,000 slow ones once
 * exhausted the process's file descriptors, and 300 clients trickling a byte every 2 s later kept
 * `/metrics` and `/healthz` refusing for a full minute. Here:
 * - at most `MAX_CONNECTIONS` connections are open at once; when all are taken, a new one evicts
 *   the oldest idle connection of the busiest address (connections.ts), so a scrape always gets in;
 * - a request's headers (and, with TLS, the handshake before them) must arrive within
 *   `HEADERS_TIMEOUT_MS`, and its response must be taken within `REQUEST_TIMEOUT_MS`; a
 *   connection past either is closed, not left half-open;
 * - every eviction, refusal and timeout is counted (`onReject`) and logged at most once per
 *   `LOG_EVERY_MS`, with the counts since the last line, so a flood cannot flood the log too.
 * With `secure`, the same server speaks HTTPS; `onConnection` runs first for each new connection,
 * before its handshake, so a certificate rotated on disk is served from the next connection on.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Server as TlsServer, TLSSocket, TlsOptions } from 'node:tls';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { ConnectionTable, type ConnectionEvent } from './connections.js';
import { http, https } from './node-http.js';

export const MAX_CONNECTIONS = 256;
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 60_000;
export const IDLE_TIMEOUT_MS = 30_000;
/** How long Node keeps an idle kept-alive connection open for its next request. */
const KEEP_ALIVE_MS = 5_000;
/** The longest timer delay Node takes as asked (a longer one fires after 1 ms). */
const TIMER_MAX_MS = 2 ** 31 - 1;
const LOG_EVERY_MS = 60_000;

export type RejectReason = 'connection_limit' | 'timeout';

export interface BoundedListenOptions {
  host: string;
  port: number;
  logger: Logger;
  onReject?: (reason: RejectReason) => void;
  maxConnections?: number;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  idleTimeoutMs?: number;
  /** Serve HTTPS with these options (web-config.ts); plain HTTP when absent. */
  secure?: TlsOptions;
  /**
   * Runs for each new connection before anything else, its TLS handshake included; new TLS
   * options it returns (a rotated certificate) serve this connection and the next.
   */
  onConnection?: () => TlsOptions | undefined;
  /** Once a TLS handshake is done: false closes the connection (client certificate policy). */
  acceptPeer?: (socket: TLSSocket) => boolean;
}

/** A listening server and the table of its connections. */
export interface BoundedServer {
  server: Server;
  /** Closes the listener and every connection; resolves once closed. */
  close(): Promise<void>;
}

/** Listens with the limits above; resolves once listening. */
export function listenBounded(app: Express, opts: BoundedListenOptions): Promise<BoundedServer> {
  const headersTimeout = opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const idleTimeout = opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
  const keepAliveTimeout = Math.min(KEEP_ALIVE_MS, idleTimeout);
  const options = {
    // Node's own headers and request timeouts are checked by one timer that runs every
    // `connectionsCheckingInterval` whether or not a connection is open: every 5 s it was half
    // of the idle daemon's CPU (bench/LOG.md, "Idle"). They are off here, and that timer
    // never comes due; the connection table gives each connection its own deadline instead.
    headersTimeout: 0,
    requestTimeout: 0,
    connectionsCheckingInterval: TIMER_MAX_MS,
    keepAliveTimeout,
  };
  const server: Server =
    opts.secure === undefined
      ? http.createServer(options, app)
      : (https().createServer(
          { ...options, ...opts.secure, handshakeTimeout: headersTimeout },
          app,
        ) as unknown as Server);
  // A socket with no traffic at all is closed after this.
  server.timeout = idleTimeout;
  const reject = rejectionLog(opts, () => table.size);
  const table = new ConnectionTable(
    {
      limit: opts.maxConnections ?? MAX_CONNECTIONS,
      // A kept-alive connection may sit idle for `keepAliveTimeout` before its next request.
      firstMs: headersTimeout,
      nextMs: keepAliveTimeout + headersTimeout,
      requestMs: opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    },
    (event) => reject(event),
  );
  watchConnections(server, table, opts);
  return new Promise((resolve, fail) => {
    server.once('listening', () =>
      resolve({
        server,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            table.closeAll();
            server.closeAllConnections();
          }),
      }),
    );
    server.once('error', fail);
    server.listen(opts.port, opts.host);
  });
}

/** Hands the server's connections, handshakes and requests to the table. */
function watchConnections(
  server: Server,
  table: ConnectionTable,
  opts: BoundedListenOptions,
): void {
  const plain = opts.secure === undefined;
  // First of the listeners: the TLS server makes its socket in its own listener, and a rotated
  // certificate must be in place before it does.
  server.prependListener('connection', (socket: Socket) => {
    const rotated = opts.onConnection?.();
    if (rotated !== undefined && !plain) (server as unknown as TlsServer).setSecureContext(rotated);
    table.admit(socket, plain);
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    if (opts.acceptPeer !== undefined && !opts.acceptPeer(socket)) {
      socket.destroy();
      return;
    }
    table.secured(socket);
  });
  server.on('timeout', (socket: Socket) => socket.destroy());
  server.on('clientError', (_err: NodeJS.ErrnoException, socket: Socket) => {
    // Answered, then closed for good: a half-open socket would keep its slot.
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n', () => socket.destroy());
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) =>
    table.requestStarted(req, res),
  );
}

/** Counts each refusal and timeout, and logs their counts at most once per `LOG_EVERY_MS`. */
function rejectionLog(
  opts: BoundedListenOptions,
  open: () => number,
): (event: ConnectionEvent) => void {
  const counts: Record<ConnectionEvent, number> = {
    evicted: 0,
    refused: 0,
    header_timeout: 0,
    request_timeout: 0,
  };
  let lastLog = -Infinity;
  return (event) => {
    counts[event] += 1;
    opts.onReject?.(event === 'evicted' || event === 'refused' ? 'connection_limit' : 'timeout');
    const now = performance.now();
    if (now - lastLog < LOG_EVERY_MS) return;
    lastLog = now;
    opts.logger.warn(
      { ...counts, open: open(), maxConnections: opts.maxConnections ?? MAX_CONNECTIONS },
      'metrics server limits hit: connections evicted, refused or timed out',
    );
    for (const key of Object.keys(counts) as ConnectionEvent[]) counts[key] = 0;
  };
}
