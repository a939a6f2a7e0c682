/**
 * The metrics server is bounded (finding 5 of the "check and the daemon share one ledger" issue):
 * thousands of slow connections exhausted the process's file descriptors and `/healthz` was down
 * for about 50 s with nothing logged. Real sockets on loopback, with small limits.
 */
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import express from 'express';
import { listenBounded, type RejectReason } from '../../src/server/listen.js';
import { eventually } from '../support/cli.js';

const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});

function openSlow(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', () => {});
    sockets.push(socket);
  });
}

describe('bounded metrics server', () => {
  it('refuses connections over the limit, cuts slow ones, logs it, and serves again', async () => {
    const app = express();
    app.get('/healthz', (_req, res) => res.send('ok'));
    const lines: string[] = [];
    const logger = pino({}, { write: (line: string) => void lines.push(line) });
    const rejected: RejectReason[] = [];
    const { server, close } = await listenBounded(app, {
      host: '127.0.0.1',
      port: 0,
      logger,
      onReject: (reason) => rejected.push(reason),
      maxConnections: 5,
      headersTimeoutMs: 300,
      idleTimeoutMs: 300,
    });
    const { port } = server.address() as AddressInfo;
    try {
      // Slowloris: connections that send part of a request and then nothing.
      const slow = await Promise.all(Array.from({ length: 20 }, () => openSlow(port)));
      for (const s of slow) s.write('GET /healthz HTTP/1.1\r\n');
      await eventually(() => rejected.includes('connection_limit'), 5_000, 'a refusal');
      await eventually(() => rejected.includes('timeout'), 5_000, 'a slow request cut');
      expect(lines.join('')).toContain('metrics server limits hit');
      // The slow ones are gone; the server answers again.
      // A refused connection is closed without an answer: each probe has its own deadline.
      await eventually(
        async () =>
          (await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(500) })
            .then((r) => r.status)
            .catch(() => 0)) === 200,
        5_000,
        '/healthz after the flood',
      );
      // Logged once per minute at most, however many were refused.
      expect(lines.filter((l) => l.includes('metrics server limits hit'))).toHaveLength(1);
    } finally {
      await close();
    }
  });

  it('cuts a request whose headers trickle in, first or after a kept-alive answer, and only it', async () => {
    const app = express();
    app.get('/healthz', (_req, res) => res.send('ok'));
    const rejected: RejectReason[] = [];
    const { server, close } = await listenBounded(app, {
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
      onReject: (reason) => rejected.push(reason),
      headersTimeoutMs: 300,
      // Far beyond the test: only the headers deadline can cut these connections.
      idleTimeoutMs: 60_000,
    });
    const { port } = server.address() as AddressInfo;
    // A client that starts a request and then sends a byte of a header every 50 ms: never idle,
    // never done.
    const trickle = (socket: Socket): Promise<string> => {
      let answer = '';
      socket.on('data', (d: Buffer) => (answer += d.toString()));
      socket.write('GET /healthz HTTP/1.1\r\nX-Slow: ');
      const timer = setInterval(() => socket.writable && socket.write('a'), 50);
      return new Promise((resolve) =>
        socket.on('close', () => {
          clearInterval(timer);
          resolve(answer);
        }),
      );
    };
    try {
      // Never idle and never done: only the headers deadline can end it (the idle one lies past
      // the test's own timeout), and the 408 says which did, however long it took on a busy
      // machine.
      const first = await openSlow(port);
      expect(await trickle(first)).toContain('408 Request Timeout');
      expect(rejected).toEqual(['timeout']);

      // Kept alive: three quick requests are answered, then the fourth trickles and is cut.
      const kept = await openSlow(port);
      const answers: string[] = [];
      kept.on('data', (d: Buffer) => answers.push(d.toString()));
      for (let i = 1; i <= 3; i++) {
        kept.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
        await eventually(
          () => answers.join('').split('200 OK').length === i + 1,
          10_000,
          `answer ${i}`,
        );
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(rejected).toEqual(['timeout']);
      const cut = trickle(kept);
      expect(await cut).toContain('408 Request Timeout');
      expect(rejected).toEqual(['timeout', 'timeout']);
    } finally {
      await close();
    }
  });
});
