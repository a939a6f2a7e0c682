/**
 * Slow clients must not shut Prometheus and the liveness probe out (docs/deploy.md, "Listener
 * limits"). 300 clients from another loopback address each trickle a byte of headers every
 * 2 s on a half-open socket and reconnect when closed, more than the server's 256 slots; meanwhile
 * a scrape of /metrics and a /healthz probe, each on a new connection as Prometheus's first
 * scrape and the kubelet's probe open one, must answer within their timeouts every time.
 * Real sockets on loopback; the server's own limits, but for a shorter header deadline.
 */
import { request } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createServerApp } from '../../src/server/app.js';
import { listenBounded, MAX_CONNECTIONS } from '../../src/server/listen.js';
import { StatusHistory } from '../../src/server/status.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { testMetrics } from '../metrics/fixtures.js';
import { eventually } from '../support/cli.js';

const ATTACKERS = 300;
const TRICKLE_MS = 2_000;
const FLOOD_MS = 9_000;
const HEALTHZ_TIMEOUT_MS = 1_000;
const SCRAPE_TIMEOUT_MS = 2_000;

let stopFlood = (): void => {};
afterEach(() => stopFlood());

/** A client that opens, sends part of a request, then a byte every `TRICKLE_MS`, forever. */
function trickler(port: number, stopped: () => boolean, closes: { n: number }): void {
  if (stopped()) return;
  // Half-open allowed: the client keeps sending after the server's FIN, as the attack did.
  const socket: Socket = connect({
    port,
    host: '127.0.0.1',
    localAddress: '127.0.0.2',
    allowHalfOpen: true,
  });
  socket.on('error', () => {});
  socket.on('data', () => {});
  let timer: NodeJS.Timeout | undefined;
  socket.on('connect', () => {
    socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    timer = setInterval(() => {
      if (stopped()) socket.destroy();
      else if (socket.writable) socket.write('a');
    }, TRICKLE_MS);
  });
  socket.on('close', () => {
    clearInterval(timer);
    closes.n += 1;
    setTimeout(() => trickler(port, stopped, closes), 50);
  });
}

/** One GET on a connection of its own; its status, or 0 when it failed or timed out. */
function probe(
  port: number,
  path: string,
  timeoutMs: number,
): Promise<{ status: number; ms: number }> {
  const began = performance.now();
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path, agent: false, timeout: timeoutMs },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, ms: performance.now() - began }),
        );
      },
    );
    const failed = (): void => {
      req.destroy();
      resolve({ status: 0, ms: performance.now() - began });
    };
    req.on('timeout', failed);
    req.on('error', failed);
    req.end();
  });
}

describe('a flood of slow clients', () => {
  it('leaves a slot for every scrape and liveness probe, and closes the slow sockets', async () => {
    const metrics = testMetrics();
    const app = createServerApp({
      registry: metrics.registry,
      status: new StatusHistory({ checks: CHECK_LIST }),
      isReady: () => true,
    });
    const listener = await listenBounded(app, {
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
      headersTimeoutMs: 3_000,
    });
    const { port } = listener.server.address() as AddressInfo;
    let stopped = false;
    stopFlood = () => (stopped = true);
    const closes = { n: 0 };
    try {
      for (let i = 0; i < ATTACKERS; i++) trickler(port, () => stopped, closes);
      const results: Array<{ path: string; status: number; ms: number }> = [];
      // Once the flood holds every slot, probe twice a second until it ends.
      await eventually(
        async () => (await connectionCount(listener.server)) >= MAX_CONNECTIONS - 10,
        10_000,
        'the flood holding every slot',
      );
      const until = performance.now() + FLOOD_MS;
      while (performance.now() < until) {
        const [healthz, scrape] = await Promise.all([
          probe(port, '/healthz', HEALTHZ_TIMEOUT_MS),
          probe(port, '/metrics', SCRAPE_TIMEOUT_MS),
        ]);
        results.push({ path: '/healthz', ...healthz }, { path: '/metrics', ...scrape });
        await new Promise((r) => setTimeout(r, 500));
      }
      const failed = results.filter((r) => r.status !== 200);
      const slowest = Math.max(...results.map((r) => r.ms));
      // The figures for docs/deploy.md: how many probes, the slowest, the slow sockets closed.
      console.log(
        `${results.length} probes, ${failed.length} failed, slowest ${slowest.toFixed(0)} ms, ` +
          `${closes.n} slow connections closed by the server, ${await connectionCount(listener.server)} open`,
      );
      expect(failed).toEqual([]);
      // Past the header deadline, the slow sockets were closed, not left half-open.
      expect(closes.n).toBeGreaterThanOrEqual(ATTACKERS);
      // Never more open than the limit.
      expect(await connectionCount(listener.server)).toBeLessThanOrEqual(MAX_CONNECTIONS);
    } finally {
      stopped = true;
      await listener.close();
    }
  }, 60_000);
});

function connectionCount(server: import('node:http').Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.getConnections((err, count) => (err ? reject(err) : resolve(count))),
  );
}
