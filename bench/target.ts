/**
 * The probe target of the side-by-side benchmark (`bench/blackbox.ts`): a minimal HTTP server, in
 * its own process, that answers `GET <prefix>/ping` like the ISA API and records for every request
 * how long the server itself spent on it (request parsed → response written). A prober's reported
 * latency minus that time is the prober's own overhead.
 *
 * Paths:
 *   <anything>/ping          200 {message, timestamp}, connection kept alive
 *   /fresh/<anything>/ping   the same with `Connection: close`, so the client opens a new
 *                            connection for every probe (what a 60 s interval gets from most servers)
 *   GET /__records           the records so far, as JSON; `?clear=1` also forgets them
 *   /isa/<name>/<rest>       with `--upstream URL` (any path but a ping): forwarded to
 *                            URL/env/<name>/<rest>, the simulator's environment <name>, so one
 *                            environment can run pings (recorded here) and lifecycle runs
 *
 * Prints `listening <url>` as its first stdout line. Binds 127.0.0.1 only.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

const upstream = parseArgs({ options: { upstream: { type: 'string' } } }).values.upstream;

interface TargetRecord {
  path: string;
  /** Wall-clock ms when the request was parsed: the fire time as the target saw it. */
  arrivedAt: number;
  /** Server time in ms, on the monotonic clock. */
  serverMs: number;
  /** Whether this request came on a connection the server had not seen before. */
  newConnection: boolean;
}

let records: TargetRecord[] = [];
const seenSockets = new WeakSet<object>();

const server = createServer((req, res) => {
  const start = process.hrtime.bigint();
  const arrivedAt = Date.now();
  const newConnection = !seenSockets.has(req.socket);
  seenSockets.add(req.socket);
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (path === '/__records') {
    const body = JSON.stringify(records);
    if ((req.url ?? '').includes('clear=1')) records = [];
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    return;
  }
  const forwarded = /^\/isa\/([^/]+)(\/.*)$/.exec(req.url ?? '');
  if (upstream !== undefined && forwarded !== null && !path.endsWith('/ping')) {
    const out = request(
      `${upstream}/env/${forwarded[1]}${forwarded[2]}`,
      { method: req.method, headers: { ...req.headers, host: new URL(upstream).host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
    return;
  }
  if (req.method !== 'GET' || !path.endsWith('/ping')) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":["not found"]}');
    return;
  }
  const body = JSON.stringify({ message: 'pong', timestamp: new Date().toISOString() });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (path.startsWith('/fresh/')) headers['connection'] = 'close';
  res.writeHead(200, headers);
  res.end(body, () => {
    const serverMs = Number(process.hrtime.bigint() - start) / 1e6;
    records.push({ path, arrivedAt, serverMs, newConnection });
  });
});
server.keepAliveTimeout = 120_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`listening http://127.0.0.1:${port}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
