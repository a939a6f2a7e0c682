/**
 * Test helpers for the simulator suites: start a simulator on a loopback port with a controllable
 * clock, and send raw HTTP requests (node:http, so no header is added behind the test's back —
 * fetch would add `Accept: *\/*`).
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterEach } from 'vitest';
import {
  startSimulator,
  type RunningSimulator,
  type SimulatorOptions,
} from '../../src/simulator/index.js';

export const API_KEY = 'test-key-1';
export const OTHER_KEY = 'test-key-2';

/** A clock the test moves by hand; starts at a fixed instant. */
export interface TestClock {
  now: () => number;
  advance: (ms: number) => void;
  set: (ms: number) => void;
}

export function testClock(start = Date.parse('2025-06-02T12:00:00.000Z')): TestClock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms), set: (ms) => void (t = ms) };
}

const running: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

/**
 * Starts a simulator for one test (closed after it). Rate limits are raised by default so suites
 * that send many requests under a frozen clock do not trip them; the rate-limit suite sets its own.
 */
export async function startTestSimulator(
  options: Partial<SimulatorOptions> = {},
): Promise<RunningSimulator> {
  const sim = await startSimulator({
    apiKeys: [API_KEY, OTHER_KEY],
    qualifyDelayMs: 1000,
    rateLimit: { perSecond: 100_000, analyticsPerMinute: 100_000 },
    ...options,
  });
  running.push(sim);
  return sim;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: () => unknown;
  /** Milliseconds from sending to the end of the body, as the client measured it. */
  elapsedMs: number;
}

export interface RawRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

/** One HTTP request with exactly the given headers. Rejects on socket errors and timeouts. */
export function rawRequest(url: string, opts: RawRequestOptions = {}): Promise<RawResponse> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers ?? {}, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: () => JSON.parse(text) as unknown,
            elapsedMs: performance.now() - started,
          });
        });
      },
    );
    req.on('error', reject);
    if (opts.timeoutMs !== undefined) {
      req.setTimeout(opts.timeoutMs, () =>
        req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })),
      );
    }
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** Headers of a well-behaved API client. */
export function apiHeaders(
  key = API_KEY,
  extra: Record<string, string> = {},
): Record<string, string> {
  return { authorization: `Bearer ${key}`, accept: 'application/json', ...extra };
}

/** A thin API client over `rawRequest` for one base URL. */
export function client(baseUrl: string, key = API_KEY) {
  const send = (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) =>
    rawRequest(`${baseUrl}${path}`, {
      method,
      headers: apiHeaders(
        key,
        body === undefined ? extra : { 'content-type': 'application/json', ...extra },
      ),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  return {
    get: (path: string, extra?: Record<string, string>) => send('GET', path, undefined, extra),
    post: (path: string, body: unknown, extra?: Record<string, string>) =>
      send('POST', path, body, extra),
    delete: (path: string, extra?: Record<string, string>) =>
      send('DELETE', path, undefined, extra),
    createSession: (body: unknown, extra?: Record<string, string>) =>
      send('POST', '/sessions', body, extra),
  };
}

/** A decoded JSON body, loosely typed so assertions can reach into it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions walk arbitrary JSON
export type Json = Record<string, any>;

/** The body of a response as a plain object (fails the test if it is not one). */
export function body(res: RawResponse): Json {
  const parsed = res.json();
  if (typeof parsed !== 'object' || parsed === null)
    throw new Error(`not a JSON object: ${res.text}`);
  return parsed as Json;
}
