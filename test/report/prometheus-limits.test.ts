/**
 * The report's Prometheus client against hostile or broken servers on loopback: credentials are
 * sent and never shown, an answer is capped after decompression, and a silent server fails the
 * report at the timeout (docs/cli.md, "report").
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { prometheusClient, ReportError, type ClientOptions } from '../../src/report/prometheus.js';

const SECRET = 'pr0m-s3cret-pass';
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function fake(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server?.address() as AddressInfo).port;
}

async function failure(url: string, options: ClientOptions = {}): Promise<string> {
  const err = await Promise.resolve()
    .then(() => prometheusClient(url, options).queryRange('up', 0, 600, 60))
    .then(
      () => null,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(ReportError);
  return (err as Error).message;
}

const EMPTY_MATRIX = JSON.stringify({
  status: 'success',
  data: { resultType: 'matrix', result: [] },
});

describe('report: credentials', () => {
  it("sends a URL's user info as basic auth, and the URL without it", async () => {
    const seen: { authorization?: string; url?: string }[] = [];
    const port = await fake((req, res) => {
      seen.push({ authorization: req.headers.authorization, url: req.url });
      res.end(EMPTY_MATRIX);
    });
    await prometheusClient(`http://ops:${SECRET}@127.0.0.1:${port}/`).queryRange('up', 0, 60, 60);
    expect(seen[0]?.authorization).toBe(`Basic ${Buffer.from(`ops:${SECRET}`).toString('base64')}`);
    expect(seen[0]?.url).not.toContain(SECRET);
  });

  it('takes the password from the option before the URL', async () => {
    let authorization: string | undefined;
    const port = await fake((req, res) => {
      authorization = req.headers.authorization;
      res.end(EMPTY_MATRIX);
    });
    await prometheusClient(`http://ops@127.0.0.1:${port}/`, { password: SECRET }).queryRange(
      'up',
      0,
      60,
      60,
    );
    expect(authorization).toBe(`Basic ${Buffer.from(`ops:${SECRET}`).toString('base64')}`);
  });

  it('never shows the password: unreachable, refused, or not a URL', async () => {
    const port = await fake((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'error', errorType: 'auth', error: `bad ${SECRET}` }));
    });
    const refused = await failure(`http://ops:${SECRET}@127.0.0.1:${port}/`);
    expect(refused).toMatch(/answered HTTP 401/);
    server?.close();
    const unreachable = await failure(`http://ops:${SECRET}@127.0.0.1:${port}/`);
    expect(unreachable).toMatch(/cannot reach/);
    const notUrl = await failure(`http://ops:${SECRET}@[bad/`);
    for (const message of [refused, unreachable, notUrl]) expect(message).not.toContain(SECRET);
  });
});

describe('report: answers too large or too slow', () => {
  it('stops reading an answer over the cap, long before the server is done', async () => {
    let written = 0;
    let closedEarly = false;
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const port = await fake((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.on('close', () => (closedEarly = written < 300 * chunk.length));
      const pump = (): void => {
        while (written < 300 * chunk.length && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const message = await failure(`http://127.0.0.1:${port}/`, { maxAnswerBytes: 4 * 2 ** 20 });
    expect(message).toMatch(/answer is larger than 4194304 bytes/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closedEarly).toBe(true);
    expect(written).toBeLessThan(100 * chunk.length);
  });

  it('caps a compressed answer by its decompressed size: a gzip bomb fails', async () => {
    const bomb = gzipSync(Buffer.alloc(200 * 2 ** 20, 0x20));
    expect(bomb.length).toBeLessThan(300 * 1024);
    const port = await fake((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    const message = await failure(`http://127.0.0.1:${port}/`, { maxAnswerBytes: 8 * 2 ** 20 });
    expect(message).toMatch(/answer is larger than 8388608 bytes/);
  });

  it('gives up on a silent server at its timeout, and says how long it waited', async () => {
    const port = await fake(() => undefined);
    const message = await failure(`http://127.0.0.1:${port}/`, { timeoutMs: 300 });
    expect(message).toMatch(/no answer in 0.3 s/);
  });
});
