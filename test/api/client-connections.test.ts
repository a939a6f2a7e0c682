import { hasSubscribers } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, callsInFlight, watchCallsInFlight } from '../../src/api/client.js';
import { createMeasuringAgent } from '../../src/api/timing.js';
import { API_KEY, USER_AGENT, sendJson, startServer, type TestServer } from './helpers.js';
import { closeSession } from '../../src/api/sessions.js';
import { ping } from '../../src/checks/ping/request.js';

/** Sum of undici's per-origin pool stats of an Agent. */
function agentStats(agent: ReturnType<typeof createMeasuringAgent>): {
  connected: number;
  pending: number;
  running: number;
} {
  const totals = { connected: 0, pending: 0, running: 0 };
  for (const stats of Object.values(agent.stats)) {
    totals.connected += Number(stats.connected); // a Client reports a boolean, a Pool a count
    totals.pending += stats.pending;
    totals.running += stats.running;
  }
  return totals;
}

describe('ApiClient connection reuse', () => {
  let server: TestServer | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await server?.close();
  });

  it('serves 200 sequential calls of every kind over one kept-alive connection', async () => {
    let n = 0;
    server = await startServer((_req, res) => {
      n++;
      // A mix of what the monitor sees: JSON, API errors, HTML, bad JSON, redirects, empty.
      switch (n % 6) {
        case 0:
          sendJson(res, 200, { message: 'pong', timestamp: new Date().toISOString() });
          break;
        case 1:
          sendJson(
            res,
            429,
            { message: 'slow', request_status: 'warning', request_id: 'r' },
            {
              'retry-after': '60',
            },
          );
          break;
        case 2:
          res.writeHead(502, { 'content-type': 'text/html' });
          res.end('<html><body>bad gateway</body></html>');
          break;
        case 3:
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"broken');
          break;
        case 4:
          res.writeHead(301, { location: '/elsewhere', 'content-length': '0' });
          res.end();
          break;
        default:
          res.writeHead(204);
          res.end();
      }
    });
    const agent = createMeasuringAgent();
    cleanups.push(() => agent.close());
    const client = new ApiClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      userAgent: USER_AGENT,
      dispatcher: agent,
    });
    cleanups.push(() => client.close());

    const statuses = new Set<number | null>();
    for (let i = 0; i < 200; i++) {
      const response =
        i % 2 === 0
          ? await ping(client, { timeoutMs: 5_000 })
          : await closeSession(client, `t${i}`, { timeoutMs: 5_000 });
      expect(response.transportError).toBeNull();
      statuses.add(response.statusCode);
    }

    expect(server.requests).toHaveLength(200);
    expect([...statuses].sort()).toEqual([200, 204, 301, 429, 502]);
    // Every body was read to the end, so the one connection went back to the pool each time.
    expect(server.connections).toBe(1);
    const stats = agentStats(agent);
    expect(stats.connected).toBeLessThanOrEqual(1);
    expect(stats.pending).toBe(0);
    expect(stats.running).toBe(0);
    // The client listens to undici's diagnostics channel only while calls are in flight.
    expect(hasSubscribers('undici:client:sendHeaders')).toBe(false);
  });

  /**
   * Two clients of one server that holds every answer until the test calls its `held` entry.
   * `arrived(...ids)` resolves once the requests with those correlation ids are held: the test
   * answers what it knows has arrived, never what it hopes has arrived by some time.
   */
  async function twoClientsOfAHoldingServer(): Promise<{
    held: (() => void)[];
    arrived: (...correlationIds: string[]) => Promise<void>;
    a: ApiClient;
    b: ApiClient;
  }> {
    const held: (() => void)[] = [];
    const seen = new Set<string>();
    const waiters: Array<() => void> = [];
    server = await startServer((req, res) => {
      held.push(() => sendJson(res, 200, { message: 'pong', timestamp: new Date().toISOString() }));
      seen.add(String(req.headers['x-correlation-id']));
      for (const wake of waiters.splice(0)) wake();
    });
    const arrived = async (...ids: string[]): Promise<void> => {
      while (!ids.every((id) => seen.has(id))) {
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    const [a, b] = [0, 1].map(() => {
      const client = new ApiClient({
        baseUrl: server!.url,
        apiKey: API_KEY,
        userAgent: USER_AGENT,
      });
      cleanups.push(() => client.close());
      return client;
    });
    return { held, arrived, a: a!, b: b! };
  }

  /** A call's options with a correlation id the holding server can be asked about. */
  const call = (correlationId: string, timeoutMs = 5_000) => ({ timeoutMs, correlationId });

  it('counts the calls in flight of every client on the thread, until each ends, answered or not', async () => {
    const { held, arrived, a, b } = await twoClientsOfAHoldingServer();
    expect(callsInFlight()).toBe(0);
    const answered = [ping(a, call('a-1')), ping(b, call('b-1'))];
    const timedOut = ping(b, call('b-2', 300));
    // Counted as each call is dispatched.
    expect(callsInFlight()).toBe(3);
    expect((await timedOut).transportError).not.toBeNull();
    expect(callsInFlight()).toBe(2);
    await arrived('a-1', 'b-1');
    for (const answer of held) answer();
    await Promise.all(answered);
    expect(callsInFlight()).toBe(0);
  });

  it('tells a watcher of each spell of calls in flight, across clients, once per spell', async () => {
    const { held, arrived, a, b } = await twoClientsOfAHoldingServer();
    const events: string[] = [];
    const unwatch = watchCallsInFlight(() => {
      events.push(`start with ${callsInFlight()} in flight`);
      return () => events.push(`end with ${callsInFlight()} in flight`);
    });
    try {
      const first = ping(a, call('first'));
      // Told synchronously, as the first call is dispatched.
      expect(events).toEqual(['start with 1 in flight']);
      const second = ping(b, call('second'));
      const timedOut = ping(a, call('timed-out', 300));
      // A call that ends (here by its deadline) while others are in flight ends no spell.
      expect((await timedOut).transportError).not.toBeNull();
      expect(events).toEqual(['start with 1 in flight']);
      await arrived('first', 'second');
      for (const answer of held.splice(0)) answer();
      await Promise.all([first, second]);
      expect(events).toEqual(['start with 1 in flight', 'end with 0 in flight']);
      // Between spells nothing is told; the next call starts a new spell.
      const third = ping(b, call('third'));
      await arrived('third');
      for (const answer of held.splice(0)) answer();
      await third;
      expect(events).toEqual([
        'start with 1 in flight',
        'end with 0 in flight',
        'start with 1 in flight',
        'end with 0 in flight',
      ]);
    } finally {
      unwatch();
    }
    // Unwatched, calls go on and nobody is told.
    const after = ping(a, call('after'));
    await arrived('after');
    for (const answer of held.splice(0)) answer();
    await after;
    expect(events).toHaveLength(4);
  });

  it('closes its own agent on close(), and leaves an injected one open', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, { message: 'pong' }));
    const own = new ApiClient({ baseUrl: server.url, apiKey: API_KEY, userAgent: USER_AGENT });
    await ping(own, { timeoutMs: 5_000 });
    await own.close();
    await own.close(); // idempotent
    expect((await ping(own, { timeoutMs: 5_000 })).transportError?.reason).toBe('network_error');

    const agent = createMeasuringAgent();
    cleanups.push(() => agent.close());
    const injected = new ApiClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      userAgent: USER_AGENT,
      dispatcher: agent,
    });
    await injected.close();
    const other = new ApiClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      userAgent: USER_AGENT,
      dispatcher: agent,
    });
    expect((await ping(other, { timeoutMs: 5_000 })).statusCode).toBe(200);
  });
});

describe('ApiClient fresh connections', () => {
  let server: TestServer | undefined;
  let client: ApiClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });

  it('opens a new connection for every freshConnection call, and reuses one otherwise', async () => {
    server = await startServer((_req, res) => {
      sendJson(res, 200, { message: 'pong', timestamp: new Date().toISOString() });
    });
    client = new ApiClient({ baseUrl: server.url, apiKey: API_KEY, userAgent: USER_AGENT });
    const fresh = [];
    for (let i = 0; i < 5; i++) {
      fresh.push(await ping(client, { timeoutMs: 5_000, freshConnection: true }));
    }
    expect(fresh.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(fresh.map((r) => r.connectionOpened)).toEqual([true, true, true, true, true]);
    expect(fresh.every((r) => r.phases.connect !== undefined)).toBe(true);
    expect(server.requests.every((r) => r.headers['connection'] === 'close')).toBe(true);
    expect(server.connections).toBe(5);

    // Kept-alive calls go through the client's pool: one connection for all of them.
    const reused = [];
    for (let i = 0; i < 5; i++) reused.push(await ping(client, { timeoutMs: 5_000 }));
    expect(reused.map((r) => r.connectionOpened)).toEqual([true, false, false, false, false]);
    expect(server.connections).toBe(6);
  });

  it('runs freshConnection calls side by side, each on its own connection', async () => {
    // A confirmation ping can overlap a scheduled one: neither may wait for the other's socket.
    let waiting: Array<() => void> = [];
    server = await startServer((_req, res) => {
      waiting.push(() =>
        sendJson(res, 200, { message: 'pong', timestamp: new Date().toISOString() }),
      );
      if (waiting.length === 2) {
        for (const answer of waiting) answer();
        waiting = [];
      }
    });
    client = new ApiClient({ baseUrl: server.url, apiKey: API_KEY, userAgent: USER_AGENT });
    const both = await Promise.all([
      ping(client, { timeoutMs: 5_000, freshConnection: true }),
      ping(client, { timeoutMs: 5_000, freshConnection: true }),
    ]);
    expect(both.map((r) => [r.statusCode, r.connectionOpened])).toEqual([
      [200, true],
      [200, true],
    ]);
    expect(server.connections).toBe(2);
    // And after both closed, the next one opens a third.
    const third = ping(client, { timeoutMs: 5_000, freshConnection: true });
    const fourth = ping(client, { timeoutMs: 5_000, freshConnection: true });
    expect((await Promise.all([third, fourth])).map((r) => r.connectionOpened)).toEqual([
      true,
      true,
    ]);
    expect(server.connections).toBe(4);
  });
});
