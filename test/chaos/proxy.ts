/**
 * A mutating proxy in front of the real simulator, on loopback: every request is forwarded to the
 * simulator (so sessions really open and close there) and its answer can be changed on the way
 * back: another status, headers added or removed, another body, a delay, a dropped connection, or
 * a second real session whose token replaces the header's. It records every request it sees and
 * every Retry-After it sends, per environment (`/env/<name>/...`), so a test can count requests
 * sent inside a Retry-After.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { request } from 'undici';
import {
  classifyEndpoint,
  startSimulator,
  type RunningSimulator,
  type SimEndpoint,
} from '../../src/simulator/index.js';
import { API_KEY } from '../support/harness.js';

export interface ProxiedRequest {
  environment: string;
  endpoint: SimEndpoint | null;
  method: string;
  path: string;
}

export interface Mutation {
  /** Answer without asking the simulator (nothing is created). */
  forward?: boolean;
  status?: number;
  setHeaders?: Record<string, string>;
  removeHeaders?: string[];
  /** Replaces the body; a function sees the simulator's body text. */
  body?: string | ((original: string) => string);
  /** Holds the whole answer this long. */
  delayMs?: number;
  /** Sends the status line and headers, then destroys the connection. */
  drop?: boolean;
  /** Creates a second real session and puts its token in the `session_token` header. */
  foreignHeaderToken?: boolean;
}

/** A window in which the monitor must not send to `environment`. */
export interface RetryAfterWindow {
  environment: string;
  from: number;
  until: number;
}

export interface Violation {
  environment: string;
  method: string;
  path: string;
  msInsideWindow: number;
}

/** Requests arriving this soon after a 429 left may have been sent before it arrived. */
export const IN_FLIGHT_TOLERANCE_MS = 25;

export interface FuzzProxy {
  url: string;
  /** Chooses a mutation per request; null forwards unchanged. */
  plan: (req: ProxiedRequest) => Mutation | null;
  /** Expected closure of a Retry-After value the proxy sent, in ms (see `expectedWindowMs`). */
  windows: RetryAfterWindow[];
  arrivals: Array<{ environment: string; at: number; method: string; path: string }>;
  /** While false, nothing is recorded (the final sweep, which stands for a later process). */
  recording: boolean;
  violations(): Violation[];
  close(): Promise<void>;
}

/**
 * The closure the monitor promises for a Retry-After value (docs/configuration.md): seconds
 * (fractions too), an HTTP-date, 60 s for anything unparsable or negative, at most one hour.
 */
export function expectedWindowMs(value: string, nowMs: number): number {
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(trimmed)) ms = Math.ceil(Number(trimmed) * 1000);
  else if (/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i.test(trimmed) && !Number.isNaN(Date.parse(trimmed)))
    ms = Math.max(0, Date.parse(trimmed) - nowMs);
  else ms = 60_000;
  return Math.min(ms, 3_600_000);
}

/** The simulator (test key, fast qualify) behind a fresh proxy; `close` stops both. */
export async function startProxiedSimulator(): Promise<{
  sim: RunningSimulator;
  proxy: FuzzProxy;
  close: () => Promise<void>;
}> {
  const sim = await startSimulator({ apiKeys: [API_KEY], qualifyDelayMs: 30 });
  const proxy = await startFuzzProxy(sim.url);
  return {
    sim,
    proxy,
    close: async () => {
      await proxy.close();
      await sim.close();
    },
  };
}

export async function startFuzzProxy(target: string): Promise<FuzzProxy> {
  const proxy: FuzzProxy = {
    url: '',
    plan: () => null,
    windows: [],
    arrivals: [],
    recording: true,
    violations() {
      const found: Violation[] = [];
      for (const arrival of this.arrivals) {
        for (const w of this.windows) {
          if (w.environment !== arrival.environment) continue;
          if (arrival.at > w.from + IN_FLIGHT_TOLERANCE_MS && arrival.at < w.until - 5) {
            found.push({ ...arrival, msInsideWindow: arrival.at - w.from });
          }
        }
      }
      return found;
    },
    close: async () => {},
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = req.url ?? '/';
    const match = /^\/env\/([^/]+)(\/.*)?$/.exec(path);
    const environment = match?.[1] ?? 'default';
    const inner = match?.[2] ?? path;
    const arrivedAt = performance.now();
    if (proxy.recording) {
      proxy.arrivals.push({ environment, at: arrivedAt, method: req.method ?? '', path });
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const requestBody = Buffer.concat(chunks);
    const endpoint = classifyEndpoint(req.method ?? 'GET', inner.split('?')[0] ?? inner);
    const mutation = proxy.plan({ environment, endpoint, method: req.method ?? '', path }) ?? {};

    let status = 502;
    let headers: Record<string, string> = { 'content-type': 'application/json' };
    let body = '{"message":"proxy: not forwarded","request_status":"error","request_id":"p"}';
    const forward = (): Promise<{
      status: number;
      headers: Record<string, string>;
      body: string;
    }> =>
      request(`${target}${path}`, {
        method: req.method as 'GET',
        headers: pickHeaders(req),
        body: requestBody.length > 0 ? requestBody : null,
      }).then(async (r) => ({
        status: r.statusCode,
        headers: flatten(r.headers),
        body: await r.body.text(),
      }));
    if (mutation.forward !== false) {
      ({ status, headers, body } = await forward());
      if (mutation.foreignHeaderToken) {
        const second = await forward();
        const foreign = second.headers['session_token'];
        if (foreign) headers['session_token'] = foreign;
      }
    }
    if (mutation.status !== undefined) status = mutation.status;
    for (const name of mutation.removeHeaders ?? []) delete headers[name];
    Object.assign(headers, mutation.setHeaders ?? {});
    if (mutation.body !== undefined) {
      body = typeof mutation.body === 'function' ? mutation.body(body) : mutation.body;
    }
    delete headers['content-length'];
    delete headers['transfer-encoding'];
    delete headers['connection'];
    delete headers['keep-alive'];
    if (mutation.delayMs) await new Promise((r) => setTimeout(r, mutation.delayMs));
    if (res.destroyed) return;
    try {
      res.writeHead(status, headers);
    } catch {
      // An invalid header value (fuzzed on purpose) cannot be sent by Node: answer raw instead.
      res.socket?.end(`HTTP/1.1 ${status} X\r\nsession_token: \x01bad\r\n\r\n`);
      return;
    }
    if (mutation.drop) {
      res.flushHeaders();
      res.socket?.destroy();
      return;
    }
    res.end(body, () => {
      const retryAfter = headers['retry-after'];
      if (!proxy.recording) return;
      if (status === 429 || (status === 503 && retryAfter !== undefined)) {
        const from = performance.now();
        const windowMs =
          retryAfter === undefined ? 60_000 : expectedWindowMs(retryAfter, Date.now());
        proxy.windows.push({ environment, from, until: from + windowMs });
      }
    });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  return proxy;
}

function pickHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['authorization', 'content-type', 'accept', 'x-correlation-id']) {
    const value = req.headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

function flatten(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
