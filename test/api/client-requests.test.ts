import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { API_KEY, USER_AGENT, sendJson, startServer, type TestServer } from './helpers.js';
import {
  closeSession,
  createSession,
  getSession,
  pollServices,
  verifyGone,
} from '../../src/api/sessions.js';
import { ping } from '../../src/checks/ping/request.js';

const opts = { timeoutMs: 5_000, correlationId: 'run-7f3a' };

describe('ApiClient requests', () => {
  let server: TestServer | undefined;
  let client: ApiClient | undefined;

  afterEach(async () => {
    await client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  async function setUp(baseSuffix = ''): Promise<{ server: TestServer; client: ApiClient }> {
    server = await startServer((req, res) => {
      if (req.url?.startsWith('/redirect')) {
        res.writeHead(302, { location: '/ping', 'content-length': '0' });
        res.end();
        return;
      }
      sendJson(res, 200, { message: 'ok', timestamp: new Date().toISOString() });
    });
    client = new ApiClient({
      baseUrl: server.url + baseSuffix,
      apiKey: API_KEY,
      userAgent: USER_AGENT,
    });
    return { server, client };
  }

  it('sends the bearer key, Accept, User-Agent and the run correlation id', async () => {
    const { server, client } = await setUp();
    const response = await ping(client, opts);
    expect(response.statusCode).toBe(200);
    expect(response.transportError).toBeNull();
    const [req] = server.requests;
    expect(req?.method).toBe('GET');
    expect(req?.url).toBe('/ping');
    expect(req?.headers['authorization']).toBe(`Bearer ${API_KEY}`);
    expect(req?.headers['accept']).toBe('application/json');
    expect(req?.headers['user-agent']).toBe(USER_AGENT);
    expect(req?.headers['x-correlation-id']).toBe('run-7f3a');
    expect(req?.headers['x-request-id']).toBe('run-7f3a');
    // A GET carries no body, so it declares no content type.
    expect(req?.headers['content-type']).toBeUndefined();
  });

  it('omits the correlation headers when no id is given', async () => {
    const { server, client } = await setUp();
    await ping(client, { timeoutMs: 5_000 });
    expect(server.requests[0]?.headers['x-correlation-id']).toBeUndefined();
    expect(server.requests[0]?.headers['x-request-id']).toBeUndefined();
  });

  it('sends the session request as JSON with Content-Type on creation', async () => {
    const { server, client } = await setUp();
    const body = { street1: '123 Main St', zip: '80202', campaign_id: 'isa-monitor-synthetic' };
    const response = await createSession(client, body, opts);
    expect(response.operation).toBe('create_session');
    expect(response.method).toBe('POST');
    expect(response.path).toBe('/sessions');
    const [req] = server.requests;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/sessions');
    expect(req?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req?.body ?? '')).toEqual(body);
  });

  it('builds each operation path with the token URL-encoded', async () => {
    const { server, client } = await setUp();
    const token = 'tok/with space?&#';
    const encoded = encodeURIComponent(token);
    const calls = [
      await getSession(client, token, opts),
      await pollServices(client, token, opts),
      await closeSession(client, token, opts),
      await verifyGone(client, token, opts),
    ];
    expect(calls.map((c) => c.operation)).toEqual([
      'get_session',
      'poll_services',
      'close_session',
      'verify_gone',
    ]);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET /sessions/${encoded}`,
      `GET /sessions/${encoded}/services/internet`,
      `DELETE /sessions/${encoded}`,
      `GET /sessions/${encoded}`,
    ]);
    expect(calls[0]?.path).toBe(`/sessions/${encoded}`);
  });

  it('joins a base URL path prefix, with or without a trailing slash', async () => {
    const { server } = await setUp('/env/production/');
    if (client) await ping(client, opts);
    const other = new ApiClient({
      baseUrl: `${server.url}/env/production`,
      apiKey: API_KEY,
      userAgent: USER_AGENT,
    });
    try {
      await getSession(other, 'abc', opts);
    } finally {
      await other.close();
    }
    expect(server.requests.map((r) => r.url)).toEqual([
      '/env/production/ping',
      '/env/production/sessions/abc',
    ]);
  });

  it('reports a redirect as a status and does not follow it', async () => {
    const { server, client } = await setUp();
    const response = await client.request({
      operation: 'ping',
      method: 'GET',
      path: '/redirect',
      timeoutMs: 5_000,
    });
    expect(response.statusCode).toBe(302);
    expect(response.headers['location']).toBe('/ping');
    expect(response.transportError).toBeNull();
    expect(server.requests.map((r) => r.url)).toEqual(['/redirect']);
  });

  it('rejects invalid options without repeating the key or URL', () => {
    const secretUrl = 'http://user:hunter2-password@127.0.0.1:1';
    const attempts = [
      { baseUrl: 'not a url', apiKey: API_KEY, userAgent: USER_AGENT },
      { baseUrl: secretUrl, apiKey: API_KEY, userAgent: USER_AGENT },
      { baseUrl: 'ftp://127.0.0.1', apiKey: API_KEY, userAgent: USER_AGENT },
      { baseUrl: 'http://127.0.0.1/?x=1', apiKey: API_KEY, userAgent: USER_AGENT },
      { baseUrl: 'http://127.0.0.1', apiKey: `${API_KEY}\r\nx: y`, userAgent: USER_AGENT },
      { baseUrl: 'http://127.0.0.1', apiKey: '', userAgent: USER_AGENT },
      { baseUrl: 'http://127.0.0.1', apiKey: API_KEY, userAgent: '' },
      { baseUrl: 'http://127.0.0.1', apiKey: API_KEY, userAgent: USER_AGENT, maxBodyBytes: 0 },
    ];
    for (const attempt of attempts) {
      let thrown: unknown;
      try {
        new ApiClient(attempt);
      } catch (err) {
        thrown = err;
      }
      expect(thrown, JSON.stringify({ ...attempt, apiKey: '…' })).toBeInstanceOf(Error);
      const text = `${String(thrown)} ${JSON.stringify(thrown)} ${(thrown as Error).stack}`;
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain('hunter2');
    }
  });

  it('rejects a non-positive timeout and an invalid correlation id as programming errors', async () => {
    const { client, server } = await setUp();
    await expect(ping(client, { timeoutMs: 0 })).rejects.toThrow(RangeError);
    await expect(ping(client, { timeoutMs: 1_000, correlationId: 'a\r\nb' })).rejects.toThrow(
      TypeError,
    );
    expect(server.requests).toHaveLength(0);
  });
});
