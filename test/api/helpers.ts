/**
 * Real loopback servers for the API client tests: plain `node:http` (or `node:https` with the
 * self-signed fixture certificate) on 127.0.0.1 and an ephemeral port, recording every request and
 * counting TCP connections so tests can see reuse and leaks from the server's side.
 *
 * The fixture certificate (test/api/fixtures/localhost.{crt,key}, test-only, valid for localhost
 * and 127.0.0.1 until 2126) was made with:
 *   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
 *     -keyout localhost.key -out localhost.crt -days 36500 -subj "/CN=localhost" \
 *     -addext "subjectAltName=DNS:localhost,IP:127.0.0.1"
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export const API_KEY = 'sk_test_9f8e7d6c5b4a39281706';
export const USER_AGENT = 'isa-monitor/9.9.9-test';

export const TLS_CERT = readFileSync(new URL('./fixtures/localhost.crt', import.meta.url));
const TLS_KEY = readFileSync(new URL('./fixtures/localhost.key', import.meta.url));

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Handler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: string,
) => void | Promise<void>;

export interface TestServer {
  /** `http://127.0.0.1:PORT` (or `https://`). */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** TCP connections accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

/** Starts a server whose handler sees each request after its body was read. */
export async function startServer(
  handler: Handler,
  options: { tls?: boolean } = {},
): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  let connections = 0;
  const listener = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      void Promise.resolve(handler(req, res, body)).catch((err: unknown) => {
        res.destroy(err instanceof Error ? err : new Error(String(err)));
      });
    });
  };
  const server = options.tls
    ? https.createServer({ cert: TLS_CERT, key: TLS_KEY }, listener)
    : http.createServer(listener);
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    requests,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with a JSON body. */
export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
