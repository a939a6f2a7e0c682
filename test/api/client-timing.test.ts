import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, type ApiResponse } from '../../src/api/client.js';
import { createMeasuringAgent, createMeasuringPool } from '../../src/api/timing.js';
import {
  API_KEY,
  TLS_CERT,
  USER_AGENT,
  delay,
  sendJson,
  startServer,
  type Handler,
  type TestServer,
} from './helpers.js';
import { getSession } from '../../src/api/sessions.js';
import { ping } from '../../src/checks/ping/request.js';

const opts = { timeoutMs: 5_000 };

/** How long the busy-thread tests keep the thread from its event loop, ms. */
const BUSY_MS = 250;

/** Keeps the thread busy without turning the event loop. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Phases are parts of the call: each non-negative, together no longer than the whole. */
function expectConsistent(response: ApiResponse): void {
  const values = Object.values(response.phases);
  for (const value of values) expect(value).toBeGreaterThanOrEqual(0);
  const sum = values.reduce((a, b) => a + b, 0);
  expect(sum).toBeLessThanOrEqual(response.durationMs + 0.001);
}

describe('ApiClient phase timings', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function serve(handler: Handler, tls = false): Promise<TestServer> {
    const server = await startServer(handler, { tls });
    cleanups.push(() => server.close());
    return server;
  }

  function client(baseUrl: string, dispatcher?: Dispatcher): ApiClient {
    const c = new ApiClient({
      baseUrl,
      apiKey: API_KEY,
      userAgent: USER_AGENT,
      ...(dispatcher ? { dispatcher } : {}),
    });
    cleanups.push(() => c.close());
    return c;
  }

  it('times connect on a fresh connection and omits it on keep-alive reuse', async () => {
    const server = await serve((_req, res) => sendJson(res, 200, { message: 'pong' }));
    const c = client(server.url);
    const first = await ping(c, opts);
    const second = await ping(c, opts);

    expect(first.phases.connect).toBeGreaterThan(0);
    // An IP literal is never resolved, and plain HTTP has no TLS.
    expect(first.phases.resolve).toBeUndefined();
    expect(first.phases.tls).toBeUndefined();
    expect(first.phases.processing).toBeGreaterThan(0);
    expect(first.phases.transfer).toBeGreaterThanOrEqual(0);
    expectConsistent(first);

    expect(second.phases.connect).toBeUndefined();
    expect(second.phases.resolve).toBeUndefined();
    expect(second.phases.processing).toBeGreaterThan(0);
    expectConsistent(second);
    expect(server.connections).toBe(1);
  });

  it('counts a server-side delay as processing', async () => {
    const server = await serve(async (_req, res) => {
      await delay(50);
      sendJson(res, 200, { message: 'pong' });
    });
    const response = await ping(client(server.url), opts);
    // Timers fire no earlier than asked; allow a hair for clock granularity.
    expect(response.phases.processing).toBeGreaterThanOrEqual(49);
    // Headers and body leave in one write and arrive in one read, stamped once: nothing of the
    // delay, nor of how busy the machine is, can land in transfer.
    expect(response.phases.transfer).toBe(0);
    expect(response.durationMs).toBeGreaterThanOrEqual(response.phases.processing ?? 0);
    expectConsistent(response);
  });

  it('counts a slow body as transfer, not processing', async () => {
    // The rest of the body waits until the client has the headers, then 150 ms more: by event
    // order, not by how quickly a busy machine delivers the first bytes.
    let headersSeenAt = 0;
    const headersSeen = new Promise<void>((resolve) => {
      const seen = (): void => {
        headersSeenAt = performance.now();
        resolve();
      };
      subscribe('undici:request:headers', seen);
      cleanups.push(async () => {
        unsubscribe('undici:request:headers', seen);
      });
    });
    const server = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"message":');
      await headersSeen;
      await delay(150);
      res.end('"pong"}');
    });
    const began = performance.now();
    const response = await ping(client(server.url), opts);
    expect(response.body).toEqual({ message: 'pong' });
    // Processing ended when the headers were read, before the client saw them; the 150 ms that
    // followed are transfer (timers fire no earlier than asked; a hair for the clock).
    expect(response.phases.processing).toBeLessThanOrEqual(headersSeenAt - began);
    expect(response.phases.transfer).toBeGreaterThanOrEqual(149);
    expectConsistent(response);
  });

  it('times the name lookup when a host name is resolved', async () => {
    const server = await serve((_req, res) => sendJson(res, 200, { message: 'pong' }));
    const response = await ping(client(`http://localhost:${server.port}`), opts);
    // The server listens on 127.0.0.1 only; localhost resolves there (perhaps after ::1).
    expect(response.statusCode).toBe(200);
    // A lookup, even of localhost, is a round trip to the thread pool: never 0 on a µs clock.
    expect(response.phases.resolve).toBeGreaterThan(0);
    expect(response.phases.connect).toBeGreaterThan(0);
    expectConsistent(response);
  });

  it('times a call from when it reaches the network, not from the thread work before it', async () => {
    const server = await serve((_req, res) => sendJson(res, 200, { message: 'pong' }));
    const c = client(server.url);
    // The busy stretch and the measured call both lie within the time the caller waited: a call
    // timed from after the stretch leaves room for it, however slow the machine is otherwise.
    let began = performance.now();
    const opened = ping(c, opts);
    // Node defers an IP literal's connect system call to a later tick: whatever the thread does
    // before it is the monitor's own time, not the API's.
    busyFor(BUSY_MS);
    const first = await opened;
    expect(first.statusCode).toBe(200);
    expect(first.phases.connect).toBeGreaterThan(0);
    expect(first.durationMs).toBeLessThanOrEqual(performance.now() - began - BUSY_MS);
    expectConsistent(first);

    // On a kept-alive connection the request is written a turn later too; it is timed from then.
    began = performance.now();
    const reused = ping(c, opts);
    busyFor(BUSY_MS);
    const second = await reused;
    expect(second.statusCode).toBe(200);
    expect(second.phases.connect).toBeUndefined();
    expect(second.durationMs).toBeLessThanOrEqual(performance.now() - began - BUSY_MS);
    expectConsistent(second);
    expect(server.connections).toBe(1);
  });

  it.each([
    ['http', false],
    ['https', true],
  ])(
    'ends a phase when its bytes are read, not when undici has parsed them (%s)',
    async (_, tls) => {
      const server = await serve((_req, res) => sendJson(res, 200, { message: 'pong' }), tls);
      // undici publishes a response's headers while it parses them, between the socket read that
      // delivered them and the handler: a stall there is the monitor's time, not the API's.
      const stall = (): void => busyFor(BUSY_MS);
      subscribe('undici:request:headers', stall);
      cleanups.push(async () => {
        unsubscribe('undici:request:headers', stall);
      });
      // On https the reads are the TLS socket's, of bytes already decrypted. Pools trusting the
      // fixture's certificate, one per connection mode as the client's own dispatchers are.
      const trusting = (): ApiClient => {
        const pool = createMeasuringPool(server.url, { connect: { ca: TLS_CERT } });
        cleanups.push(() => pool.close());
        return client(server.url, pool);
      };
      const own = tls ? undefined : client(server.url);
      const fresh = own ?? trusting();
      const kept = own ?? trusting();
      const opened: boolean[] = [];
      for (const freshConnection of [true, false, false]) {
        const began = performance.now();
        const response = await ping(freshConnection ? fresh : kept, { ...opts, freshConnection });
        const took = performance.now() - began;
        expect(response.statusCode).toBe(200);
        expect(response.body).toEqual({ message: 'pong' });
        // The stall happened inside the call: it shows outside the measured duration only, which
        // leaves room for it in the time the caller waited, however slow the rest was.
        expect(took).toBeGreaterThanOrEqual(BUSY_MS);
        expect(response.durationMs).toBeLessThanOrEqual(took - BUSY_MS);
        expect(response.phases.processing).toBeLessThanOrEqual(took - BUSY_MS);
        expectConsistent(response);
        opened.push(response.connectionOpened);
      }
      // The third call was timed on a reused connection: its reads were stamped too.
      expect(opened).toEqual([true, true, false]);
      expect(server.connections).toBe(2);
    },
  );

  it('ends a body that runs to the close when the close is read', async () => {
    const server = await serve(async (_req, res) => {
      // No length and no chunks: the body ends where the connection does.
      const socket = res.socket!;
      socket.write(
        'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n' +
          '{"message":"pong"}',
      );
      await delay(150);
      socket.end();
    });
    const response = await ping(client(server.url), opts);
    expect(response.statusCode).toBe(200);
    expect(response.body).toEqual({ message: 'pong' });
    // The body's bytes came at once; its end, 150 ms later, is part of the transfer.
    expect(response.phases.transfer).toBeGreaterThanOrEqual(100);
    expectConsistent(response);
  });

  it("keeps a caller's own lookup and times it as the resolve phase", async () => {
    const server = await serve((_req, res) => sendJson(res, 200, { message: 'pong' }));
    const slowLookup: LookupFunction = (hostname, options, callback) => {
      setTimeout(() => dnsLookup(hostname, options, callback), 60);
    };
    const agent = createMeasuringAgent({ connect: { lookup: slowLookup, family: 4 } });
    cleanups.push(() => agent.close());
    const response = await ping(client(`http://localhost:${server.port}`, agent), opts);
    expect(response.statusCode).toBe(200);
    expect(response.phases.resolve).toBeGreaterThanOrEqual(59);
    expect(response.phases.connect).toBeGreaterThan(0);
    // Resolve and connect do not overlap: together they fit in the call (a connect timed from
    // the lookup's start would count the 60 ms twice).
    expectConsistent(response);
  });

  it('times the TLS handshake of an https connection', async () => {
    const server = await serve((_req, res) => sendJson(res, 200, { message: 'pong' }), true);
    const agent = createMeasuringAgent({ connect: { ca: TLS_CERT } });
    cleanups.push(() => agent.close());
    const c = client(server.url, agent);
    const first = await ping(c, opts);
    expect(first.statusCode).toBe(200);
    expect(first.phases.connect).toBeGreaterThan(0);
    expect(first.phases.tls).toBeGreaterThan(0);
    expectConsistent(first);
    const second = await ping(c, opts);
    expect(second.phases.tls).toBeUndefined();
    expect(second.phases.connect).toBeUndefined();
  });

  it('reports a TLS failure as a network error', async () => {
    const server = await serve((_req, res) => sendJson(res, 200, {}), true);
    // The default agent trusts only the system roots, not the self-signed fixture.
    const response = await ping(client(server.url), opts);
    expect(response.statusCode).toBeNull();
    expect(response.transportError?.reason).toBe('network_error');
    expect(response.transportError?.code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
  });

  it('keeps processing and transfer with an injected plain Agent', async () => {
    const server = await serve((_req, res) => sendJson(res, 200, { message: 'pong' }));
    const agent = new Agent();
    cleanups.push(() => agent.close());
    const response = await ping(client(server.url, agent), opts);
    expect(response.statusCode).toBe(200);
    // No measuring connector, so no connection phases; the rest is measured by the client.
    expect(response.phases.connect).toBeUndefined();
    expect(response.phases.processing).toBeGreaterThan(0);
    expect(response.phases.transfer).toBeGreaterThanOrEqual(0);
  });

  it('attributes phases to the right call when calls overlap', async () => {
    // The slow call is answered 120 ms after the fast one has ended: event order keeps the two
    // apart however slow the machine is.
    let fastEndedAt = 0;
    let fastEnded: () => void = () => {};
    const fastDone = new Promise<void>((resolve) => (fastEnded = resolve));
    const server = await serve(async (req, res) => {
      if (req.url === '/ping') {
        await fastDone;
        await delay(120);
      }
      sendJson(res, 200, { message: req.url });
    });
    const c = client(server.url);
    const began = performance.now();
    const [slow, fast] = await Promise.all([
      ping(c, opts),
      getSession(c, 't', opts).then((response) => {
        fastEndedAt = performance.now();
        fastEnded();
        return response;
      }),
    ]);
    expect(slow.phases.processing).toBeGreaterThanOrEqual(119);
    expect(fast.phases.processing).toBeLessThanOrEqual(fastEndedAt - began);
    // Both opened their own connection (undici pipelines nothing by default).
    expect(slow.phases.connect).toBeGreaterThan(0);
    expect(fast.phases.connect).toBeGreaterThan(0);
    expect(server.connections).toBe(2);
  });
});
