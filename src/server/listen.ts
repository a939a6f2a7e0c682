/**
 * The metrics server's socket, bounded. It listens on 0.0.0.0 by default, so anything on the
 * network can open connections to it; 21,000 slow ones once exhausted the process's file
 * descriptors and took `/healthz` down with nothing logged. Here:
 * - at most `MAX_CONNECTIONS` connections are open at once; more are refused (closed at once);
 * - a request must arrive whole within `REQUEST_TIMEOUT_MS` (headers within `HEADERS_TIMEOUT_MS`),
 *   and an idle connection is closed after `IDLE_TIMEOUT_MS`;
 * - every refusal and timeout is counted (`onReject`) and logged at most once per
 *   `LOG_EVERY_MS`, with the count since the last line, so a flood cannot flood the log too.
 * Prometheus holds one keep-alive connection per scrape target, so the limits leave it room.
 */
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';
import type { Logger } from 'pino';

export const MAX_CONNECTIONS = 256;
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 15_000;
export const IDLE_TIMEOUT_MS = 30_000;
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
}

/** Listens with the limits above; resolves once listening. */
export function listenBounded(app: Express, opts: BoundedListenOptions): Promise<Server> {
  const headersTimeout = opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const server = createServer(
    {
      headersTimeout,
      requestTimeout: opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      keepAliveTimeout: Math.min(5_000, opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS),
      // How often Node looks for requests past their timeouts (default 30 s). Node runs this
      // timer whether or not any connection is open, so it wakes an idle daemon: at half the
      // headers timeout a slow request is cut within 1.5× its timeout, and the idle main thread
      // wakes every 5 s instead of every second (bench/README.md, "Idle").
      connectionsCheckingInterval: Math.max(10, Math.min(5_000, headersTimeout / 2)),
    },
    app,
  );
  server.maxConnections = opts.maxConnections ?? MAX_CONNECTIONS;
  // A socket with no traffic at all (not even a first request line) is closed after this.
  server.timeout = opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS;

  const counts: Record<RejectReason, number> = { connection_limit: 0, timeout: 0 };
  let lastLog = -Infinity;
  const reject = (reason: RejectReason): void => {
    counts[reason] += 1;
    opts.onReject?.(reason);
    const now = performance.now();
    if (now - lastLog < LOG_EVERY_MS) return;
    lastLog = now;
    opts.logger.warn(
      { ...counts, maxConnections: server.maxConnections },
      'metrics server limits hit: connections refused or timed out',
    );
    counts.connection_limit = 0;
    counts.timeout = 0;
  };
  server.on('drop', () => reject('connection_limit'));
  server.on('timeout', (socket: Socket) => {
    reject('timeout');
    socket.destroy();
  });
  // Slow requests (headers or body too slow) end in a 408 from Node; count those too.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    if (timedOut) reject('timeout');
    const status = timedOut ? '408 Request Timeout' : '400 Bad Request';
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
    else socket.destroy();
  });
  return new Promise((resolve, fail) => {
    server.once('listening', () => resolve(server));
    server.once('error', fail);
    server.listen(opts.port, opts.host);
  });
}
