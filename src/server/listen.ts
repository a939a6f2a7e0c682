/**
 * The metrics server's socket, bounded. It listens on 0.0.0.0 by default, so anything on the
 * network can open connections to it; 21,000 slow ones once exhausted the process's file
 * descriptors and took `/healthz` down with nothing logged. Here:
 * - at most `MAX_CONNECTIONS` connections are open at once; more are refused (closed at once);
 * - a request's headers must arrive within `HEADERS_TIMEOUT_MS` of the moment the server waits for
 *   them, and a connection with no traffic is closed after `IDLE_TIMEOUT_MS`;
 * - every refusal and timeout is counted (`onReject`) and logged at most once per
 *   `LOG_EVERY_MS`, with the count since the last line, so a flood cannot flood the log too.
 * Prometheus holds one keep-alive connection per scrape target, so the limits leave it room.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';
import type { Logger } from 'pino';

export const MAX_CONNECTIONS = 256;
export const HEADERS_TIMEOUT_MS = 10_000;
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
  idleTimeoutMs?: number;
}

/** Listens with the limits above; resolves once listening. */
export function listenBounded(app: Express, opts: BoundedListenOptions): Promise<Server> {
  const headersTimeout = opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const idleTimeout = opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
  const keepAliveTimeout = Math.min(KEEP_ALIVE_MS, idleTimeout);
  const server = createServer(
    {
      // Node's own headers and request timeouts are checked by one timer that runs every
      // `connectionsCheckingInterval` whether or not a connection is open: every 5 s it was half
      // of the idle daemon's CPU (bench/README.md, "Idle"). They are off here, and that timer
      // never comes due; `cutSlowRequests` below gives each connection its own deadline instead.
      headersTimeout: 0,
      requestTimeout: 0,
      connectionsCheckingInterval: TIMER_MAX_MS,
      keepAliveTimeout,
    },
    app,
  );
  server.maxConnections = opts.maxConnections ?? MAX_CONNECTIONS;
  // A socket with no traffic at all (not even a first request line) is closed after this.
  server.timeout = idleTimeout;

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
  const answer = (socket: Socket, status: string): void => {
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
    else socket.destroy();
  };
  server.on('clientError', (_err: NodeJS.ErrnoException, socket: Socket) =>
    answer(socket, '400 Bad Request'),
  );
  cutSlowRequests(server, {
    // A kept-alive connection may sit idle for `keepAliveTimeout` before its next request starts.
    firstMs: headersTimeout,
    nextMs: keepAliveTimeout + headersTimeout,
    onExpired: (socket) => {
      reject('timeout');
      answer(socket, '408 Request Timeout');
    },
  });
  return new Promise((resolve, fail) => {
    server.once('listening', () => resolve(server));
    server.once('error', fail);
    server.listen(opts.port, opts.host);
  });
}

/**
 * Gives each connection a deadline for its next request's headers: `firstMs` from its opening,
 * `nextMs` from the end of each response; a connection past it goes to `onExpired`. The timer
 * exists only while its connection does, and is off while a request is in the app's hands (the
 * routes answer at once and read no body; a body sent slowly after the answer falls under the
 * next deadline, as Node discards it).
 */
function cutSlowRequests(
  server: Server,
  opts: { firstMs: number; nextMs: number; onExpired: (socket: Socket) => void },
): void {
  const waiting = new WeakMap<Socket, { timer: NodeJS.Timeout | undefined; inFlight: number }>();
  const wait = (socket: Socket, ms: number): NodeJS.Timeout =>
    setTimeout(() => opts.onExpired(socket), ms).unref();
  server.on('connection', (socket: Socket) => {
    const state = { timer: wait(socket, opts.firstMs), inFlight: 0 };
    waiting.set(socket, state);
    socket.once('close', () => clearTimeout(state.timer));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = waiting.get(req.socket);
    if (state === undefined) return;
    state.inFlight += 1;
    clearTimeout(state.timer);
    state.timer = undefined;
    res.once('close', () => {
      state.inFlight -= 1;
      if (state.inFlight === 0 && !req.socket.destroyed)
        state.timer = wait(req.socket, opts.nextMs);
    });
  });
}
