import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import {
  API_KEY,
  USER_AGENT,
  sendJson,
  startServer,
  type Handler,
  type TestServer,
} from './helpers.js';
import { closeSession, createSession, getSession } from '../../src/api/sessions.js';
import { ping } from '../../src/checks/ping/request.js';

const opts = { timeoutMs: 5_000 };

describe('ApiClient response decoding', () => {
  let server: TestServer | undefined;
  let client: ApiClient | undefined;

  afterEach(async () => {
    await client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  async function serve(handler: Handler, maxBodyBytes?: number): Promise<ApiClient> {
    server = await startServer(handler);
    client = new ApiClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      userAgent: USER_AGENT,
      ...(maxBodyBytes !== undefined ? { maxBodyBytes } : {}),
    });
    return client;
  }

  it('parses a JSON body whatever the charset parameter', async () => {
    const c = await serve((_req, res) => sendJson(res, 200, { message: 'pong', n: 1 }));
    const response = await ping(c, opts);
    expect(response.body).toEqual({ message: 'pong', n: 1 });
    expect(response.bodyError).toBeNull();
    expect(response.bodySnippet).toBeNull();
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('flags an HTML page as not_json with a short single-line snippet', async () => {
    const page = `<!DOCTYPE html>\n<html>\n  <head><title>502 Bad Gateway</title></head>\n  <body>${'x'.repeat(5_000)}</body>\n</html>`;
    const c = await serve((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(page);
    });
    const response = await ping(c, opts);
    expect(response.statusCode).toBe(502);
    expect(response.body).toBeUndefined();
    expect(response.bodyError).toBe('not_json');
    expect(response.bodySnippet).toMatch(/^<!DOCTYPE html> <html> <head><title>502 Bad Gateway/);
    expect(response.bodySnippet?.length).toBeLessThanOrEqual(200);
    expect(response.bodySnippet).not.toMatch(/[\n\r\t]/);
  });

  it('flags a body that claims JSON but does not parse as invalid_json', async () => {
    const c = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"message": "pong", ');
    });
    const response = await ping(c, opts);
    expect(response.statusCode).toBe(200);
    expect(response.bodyError).toBe('invalid_json');
    expect(response.bodySnippet).toBe('{"message": "pong",');
  });

  it('treats an empty body as no body rather than an error', async () => {
    const c = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '0' });
      res.end();
    });
    const response = await closeSession(c, 'abc', opts);
    expect(response.statusCode).toBe(200);
    expect(response.body).toBeUndefined();
    expect(response.bodyError).toBeNull();
  });

  it('extracts the request_id of an error envelope', async () => {
    const c = await serve((_req, res) =>
      sendJson(res, 422, {
        message: 'invalid address',
        request_status: 'warning',
        request_id: 'req-4f2a-77',
        errors: { base: ['no valid address combination'] },
      }),
    );
    const response = await createSession(c, { street1: 'x' }, opts);
    expect(response.statusCode).toBe(422);
    expect(response.requestId).toBe('req-4f2a-77');
    expect(response.body).toMatchObject({ request_status: 'warning' });
  });

  it('reads no request_id from a success body or a body without one', async () => {
    const c = await serve((req, res) => {
      if (req.url === '/ping') sendJson(res, 200, { message: 'pong', request_id: 'r-1' });
      else sendJson(res, 500, { message: 'boom' });
    });
    expect((await ping(c, opts)).requestId).toBeNull();
    expect((await getSession(c, 't', opts)).requestId).toBeNull();
  });

  it('parses Retry-After given in seconds', async () => {
    const c = await serve((_req, res) =>
      sendJson(
        res,
        429,
        { message: 'slow down', request_status: 'warning', request_id: 'r-429' },
        { 'retry-after': '60' },
      ),
    );
    const response = await ping(c, opts);
    expect(response.statusCode).toBe(429);
    expect(response.retryAfterMs).toBe(60_000);
    expect(response.requestId).toBe('r-429');
  });

  it('parses Retry-After given as an HTTP date', async () => {
    const c = await serve((_req, res) =>
      sendJson(
        res,
        503,
        { address_validation_unavailable: true },
        { 'retry-after': new Date(Date.now() + 120_000).toUTCString() },
      ),
    );
    const response = await createSession(c, { street1: '1 Main St', zip: '80202' }, opts);
    expect(response.statusCode).toBe(503);
    // toUTCString drops milliseconds, and the call itself takes a moment.
    expect(response.retryAfterMs).toBeGreaterThan(110_000);
    expect(response.retryAfterMs).toBeLessThanOrEqual(120_000);
  });

  it('reads the Server-Timing duration', async () => {
    const c = await serve((_req, res) =>
      sendJson(res, 200, { message: 'pong' }, { 'server-timing': 'db;dur=2.5, sim;dur=12.345' }),
    );
    const response = await ping(c, opts);
    expect(response.serverTimingMs).toBe(12.345);
    expect(response.durationMs).toBeGreaterThan(0);
  });

  it('has no server time when the header is absent', async () => {
    const c = await serve((_req, res) => sendJson(res, 200, { message: 'pong' }));
    expect((await ping(c, opts)).serverTimingMs).toBeNull();
  });

  it('stops reading a body over the cap and still serves the next call', async () => {
    const big = JSON.stringify({ message: 'x'.repeat(64 * 1024) });
    const c = await serve((req, res) => {
      if (req.url === '/ping') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(big);
      } else {
        sendJson(res, 200, { message: 'small' });
      }
    }, 4_096);
    const response = await ping(c, opts);
    expect(response.statusCode).toBe(200);
    expect(response.bodyError).toBe('too_large');
    expect(response.body).toBeUndefined();
    expect(response.transportError).toBeNull();
    expect(response.bodySnippet?.startsWith('{"message":"xxx')).toBe(true);
    const next = await getSession(c, 't', opts);
    expect(next.body).toEqual({ message: 'small' });
  });

  it('accepts a body exactly at the cap', async () => {
    const body = JSON.stringify({ message: 'y'.repeat(100) });
    const c = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    }, Buffer.byteLength(body));
    const response = await ping(c, opts);
    expect(response.bodyError).toBeNull();
    expect(response.body).toEqual({ message: 'y'.repeat(100) });
  });

  it('joins repeated response headers into one value', async () => {
    const c = await serve((_req, res) => {
      res.setHeader('x-multi', ['a', 'b']);
      sendJson(res, 200, {});
    });
    expect((await ping(c, opts)).headers['x-multi']).toBe('a, b');
  });
});
