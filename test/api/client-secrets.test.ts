import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, type ApiResponse } from '../../src/api/client.js';
import { API_KEY, USER_AGENT, closedPort, startServer, type TestServer } from './helpers.js';
import { getSession } from '../../src/api/sessions.js';
import { ping } from '../../src/checks/ping/request.js';

/**
 * Everything a caller could log or print: the response as JSON and as `util.inspect` shows it.
 * The key's tail is checked too, so a truncated copy would also be caught.
 */
function expectKeyAbsent(value: unknown): void {
  const texts = [JSON.stringify(value), inspect(value, { depth: null, showHidden: true })];
  for (const text of texts) {
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain(API_KEY.slice(-10));
  }
}

describe('ApiClient keeps the API key to itself', () => {
  let server: TestServer | undefined;
  let client: ApiClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  it('sends no Authorization header when the environment has no key', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    client = new ApiClient({ baseUrl: server.url, apiKey: null, userAgent: USER_AGENT });
    await ping(client, { timeoutMs: 5_000 });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers['authorization']).toBeUndefined();
    expect(server.requests[0]?.headers['user-agent']).toBe(USER_AGENT);
  });

  /** A server that echoes the Authorization header back everywhere it can. */
  async function echoingServer(): Promise<ApiClient> {
    server = await startServer((req, res) => {
      const auth = req.headers['authorization'] ?? '';
      switch (req.url) {
        case '/ping': // 401 envelope quoting the credential in message and request_id
          res.writeHead(401, { 'content-type': 'application/json', 'x-echo': auth });
          res.end(
            JSON.stringify({
              message: `bad credential ${auth}`,
              request_status: 'warning',
              request_id: auth,
            }),
          );
          return;
        case '/sessions/html': // an HTML error page quoting it
          res.writeHead(500, { 'content-type': 'text/html', 'www-authenticate': auth });
          res.end(`<html><body><pre>\n\n${auth}</pre></body></html>`);
          return;
        case '/sessions/bad-json': // broken JSON with the key inside
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(`{"echo": "${auth}`);
          return;
        case '/sessions/huge': // an oversized body that starts with the key
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(`${auth} ${'x'.repeat(10_000)}`);
          return;
        case '/sessions/hang':
          return;
        default: // reset mid-body, after echoing the key in a header
          res.writeHead(200, {
            'content-type': 'application/json',
            'x-echo': auth,
            'content-length': '100',
          });
          res.write(`{"echo":"${auth}`);
          setTimeout(() => req.socket.destroy(), 10);
      }
    });
    client = new ApiClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      userAgent: USER_AGENT,
      maxBodyBytes: 2_048,
    });
    return client;
  }

  it('never returns the key, even from a server that echoes it back', async () => {
    const c = await echoingServer();
    const opts = { timeoutMs: 2_000 };
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error(`shutting down ${API_KEY}`)), 100);
    const responses: ApiResponse[] = [
      await ping(c, opts),
      await getSession(c, 'html', opts),
      await getSession(c, 'bad-json', opts),
      await getSession(c, 'huge', opts),
      await getSession(c, 'reset', opts),
      await getSession(c, 'hang', { timeoutMs: 200 }),
      await getSession(c, 'hang', { timeoutMs: 5_000, signal: abort.signal }),
    ];
    // Each case did exercise its path.
    expect(responses.map((r) => r.statusCode ?? r.transportError?.reason)).toEqual([
      401,
      500,
      200,
      200,
      'network_error',
      'timeout',
      'aborted',
    ]);
    expect(responses.map((r) => r.bodyError)).toEqual([
      null,
      'not_json',
      'invalid_json',
      'too_large',
      null,
      null,
      null,
    ]);
    expect(responses[0]?.requestId).toBe('Bearer [redacted]');
    expect(responses[1]?.bodySnippet).toContain('[redacted]');
    for (const response of responses) expectKeyAbsent(response);
    expectKeyAbsent(c);
  });

  it('keeps the key out of network failures and thrown argument errors', async () => {
    const port = await closedPort();
    client = new ApiClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: API_KEY,
      userAgent: USER_AGENT,
    });
    expectKeyAbsent(await ping(client, { timeoutMs: 2_000 }));
    const thrown = await ping(client, { timeoutMs: -1 }).catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(RangeError);
    expectKeyAbsent(thrown);
    expectKeyAbsent((thrown as Error).stack);
  });
});
