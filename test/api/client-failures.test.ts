import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, type ApiResponse } from '../../src/api/client.js';
import {
  API_KEY,
  USER_AGENT,
  closedPort,
  sendJson,
  startServer,
  type TestServer,
} from './helpers.js';
import { ping } from '../../src/checks/ping/request.js';

function newClient(baseUrl: string): ApiClient {
  return new ApiClient({ baseUrl, apiKey: API_KEY, userAgent: USER_AGENT });
}

/** What every transport failure looks like, whatever its reason. */
function expectNoResponse(response: ApiResponse): void {
  expect(response.statusCode).toBeNull();
  expect(response.body).toBeUndefined();
  expect(response.bodyError).toBeNull();
  expect(response.requestId).toBeNull();
  expect(response.transportError).not.toBeNull();
}

describe('ApiClient transport failures', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function serve(handler: Parameters<typeof startServer>[0]): Promise<TestServer> {
    const server = await startServer(handler);
    cleanups.push(() => server.close());
    return server;
  }

  function client(baseUrl: string): ApiClient {
    const c = newClient(baseUrl);
    cleanups.push(() => c.close());
    return c;
  }

  it('ends a call to a server that never answers at its deadline, as a timeout', async () => {
    const server = await serve(() => {
      // Never respond.
    });
    const called = performance.now();
    const response = await ping(client(server.url), { timeoutMs: 300 });
    const waited = performance.now() - called;
    expectNoResponse(response);
    expect(response.transportError?.reason).toBe('timeout');
    expect(response.transportError?.code).toBe('REQUEST_TIMEOUT');
    // The deadline runs from the call (a timer never fires early); the duration from the dial,
    // which a busy machine can reach some milliseconds later, so it is only bounded by the wait.
    expect(waited).toBeGreaterThanOrEqual(299);
    expect(response.durationMs).toBeGreaterThan(0);
    expect(response.durationMs).toBeLessThanOrEqual(waited);
    // The request was written before the server went quiet.
    expect(server.requests).toHaveLength(1);
  });

  it('times out a body that stops half-way, after the headers arrived', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"message":');
    });
    const response = await ping(client(server.url), { timeoutMs: 300 });
    expectNoResponse(response);
    expect(response.transportError?.reason).toBe('timeout');
    // Headers did arrive; the phase up to them is still reported.
    expect(response.headers['content-length']).toBe('100');
    expect(response.phases.processing).toBeGreaterThanOrEqual(0);
    expect(response.phases.transfer).toBeUndefined();
  });

  it('classifies a refused connection as a network error', async () => {
    const port = await closedPort();
    const response = await ping(client(`http://127.0.0.1:${port}`), { timeoutMs: 2_000 });
    expectNoResponse(response);
    expect(response.transportError).toMatchObject({
      reason: 'network_error',
      code: 'ECONNREFUSED',
    });
    expect(response.durationMs).toBeLessThan(2_000);
  });

  it('classifies a connection reset in the middle of a response as a network error', async () => {
    const server = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"message":"po');
      setTimeout(() => req.socket.destroy(), 20);
    });
    const response = await ping(client(server.url), { timeoutMs: 2_000 });
    expectNoResponse(response);
    expect(response.transportError?.reason).toBe('network_error');
    expect(response.transportError?.code).toBe('UND_ERR_SOCKET');
  });

  it('classifies a connection closed before any response as a network error', async () => {
    const server = await serve((req) => {
      req.socket.destroy();
    });
    const response = await ping(client(server.url), { timeoutMs: 2_000 });
    expectNoResponse(response);
    expect(response.transportError?.reason).toBe('network_error');
  });

  it('classifies an unresolvable host name as a network error', async () => {
    // `.invalid` never resolves (RFC 2606); no network is needed to learn that.
    const response = await ping(client('http://isa-monitor-test.invalid'), { timeoutMs: 5_000 });
    expectNoResponse(response);
    expect(response.transportError?.reason).toBe('network_error');
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain(response.transportError?.code);
  });

  it('ends a call aborted through the external signal as aborted, promptly', async () => {
    const server = await serve(() => {
      // Never respond; only the abort can end the call.
    });
    const controller = new AbortController();
    let abortedAt = Number.NaN;
    const called = performance.now();
    setTimeout(() => {
      abortedAt = performance.now();
      controller.abort();
    }, 100);
    const response = await ping(client(server.url), {
      timeoutMs: 10_000,
      signal: controller.signal,
    });
    const settledAt = performance.now();
    expectNoResponse(response);
    expect(response.transportError).toMatchObject({ reason: 'aborted', code: 'REQUEST_ABORTED' });
    // Like the deadline above, the abort is checked from the caller's wait: the duration starts at
    // the dial, which a busy machine can reach some milliseconds after the call, so the duration
    // can be shorter than the delay before the abort. The call ends only after the abort, and
    // long before its own 10 s deadline could have ended it.
    expect(settledAt).toBeGreaterThanOrEqual(abortedAt);
    expect(abortedAt - called).toBeGreaterThanOrEqual(99);
    expect(settledAt - abortedAt).toBeLessThan(5_000);
    expect(response.durationMs).toBeGreaterThan(0);
    expect(response.durationMs).toBeLessThanOrEqual(settledAt - called);
  });

  it('does not send anything when the signal is already aborted', async () => {
    const server = await serve((_req, res) => sendJson(res, 200, {}));
    const controller = new AbortController();
    controller.abort();
    const response = await ping(client(server.url), {
      timeoutMs: 1_000,
      signal: controller.signal,
    });
    expect(response.transportError?.reason).toBe('aborted');
    expect(server.requests).toHaveLength(0);
  });

  it('settles at the deadline even while the connection is still being made', async () => {
    // On a one-connection pool, a call queued behind a hanging one gets no connection before
    // its deadline: undici is still holding it when the call has to end.
    const { Agent } = await import('undici');
    const server = await serve(() => {
      // Never respond.
    });
    const agent = new Agent({ connections: 1 });
    cleanups.push(() => agent.destroy());
    const c = new ApiClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      userAgent: USER_AGENT,
      dispatcher: agent,
    });
    const first = ping(c, { timeoutMs: 1_000 });
    let firstSettled = false;
    void first.then(() => (firstSettled = true));
    const queued = await ping(c, { timeoutMs: 200 });
    expect(queued.transportError?.reason).toBe('timeout');
    // Its own deadline ended it: a call that waited for the connection would settle only after
    // the hanging call's deadline frees it. An order, not a wall-clock bound, so load cannot flip it.
    expect(firstSettled).toBe(false);
    expect((await first).transportError?.reason).toBe('timeout');
    // The queued request was aborted when undici got to it, not sent late.
    expect(server.requests).toHaveLength(1);
  });

  it('leaves no abort listener behind on a long-lived signal', async () => {
    const server = await serve((_req, res) => sendJson(res, 200, { message: 'ok' }));
    const c = client(server.url);
    const controller = new AbortController();
    for (let i = 0; i < 5; i++) {
      await ping(c, { timeoutMs: 2_000, signal: controller.signal });
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('reports a closed client as a network error instead of throwing', async () => {
    const server = await serve((_req, res) => sendJson(res, 200, {}));
    const c = newClient(server.url);
    await c.close();
    const response = await ping(c, { timeoutMs: 1_000 });
    expectNoResponse(response);
    expect(response.transportError?.reason).toBe('network_error');
    expect(response.transportError?.code).toBe('UND_ERR_DESTROYED');
  });
});
