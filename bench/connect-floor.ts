/**
 * The floor under a new connection per ping in Node, three ways alternately against
 * bench/target.ts, each as client overhead (client time − the target's own time):
 *
 * - `bare`: `net.connect`, one GET with `Connection: close`, timed to the read that completes the
 *   answer (headers and body), as the monitor times to the read of the last byte (api/timing.ts);
 *   from the call and, in a second column, from the socket's `connectionAttempt` (just before the
 *   `connect` system call, where blackbox_exporter's phases start: Go's `ConnectStart`);
 * - `undici`: undici's `Pool` with `reset: true` (what the monitor's new-connection mode asks of
 *   undici), timed from the call;
 * - `monitor`: the monitor's own `ApiClient` with `freshConnection`: its `durationMs`, which is
 *   timed from the connection attempt (api/timing.ts).
 *
 * Run with the target on one CPU and this on the other, as `--mode compare` pins them, to see how
 * much of a new connection's overhead is the thread's work before the connection attempt.
 *
 * Usage: taskset -c 0 npx tsx bench/target.ts            # prints `listening URL`
 *        taskset -c 1 npx tsx bench/connect-floor.ts URL [--count 200]
 */
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { ApiClient } from '../src/api/client.js';
import { ping } from '../src/checks/ping/request.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { count: { type: 'string', default: '200' } },
});
const target = positionals[0];
const count = Number(values.count);
if (target === undefined || !(count > 0)) {
  process.stderr.write('usage: npx tsx bench/connect-floor.ts TARGET_URL [--count N]\n');
  process.exit(2);
}
const url = new URL(target);
const AUTH = 'Bearer connect-floor-0123456789';

/** One new-connection request: client time from the call, and from the connection attempt. */
interface Timed {
  fromCall: number;
  fromAttempt: number;
}

/**
 * Whether `received` holds a whole answer: its headers, then `Content-Length` bytes of body or
 * chunks up to the last, empty one (target.ts answers in chunks).
 */
function complete(received: Buffer): boolean {
  const headEnd = received.indexOf('\r\n\r\n');
  if (headEnd < 0) return false;
  const head = received.subarray(0, headEnd).toString();
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    return received.subarray(-5).toString() === '0\r\n\r\n';
  }
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  return length !== null && received.length - (headEnd + 4) >= Number(length[1]);
}

/** Connects, sends one GET with `Connection: close`, reads the answer; the server closes. */
function bare(path: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    let attempted = began;
    let received = Buffer.alloc(0);
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      const now = performance.now();
      resolve({ fromCall: now - began, fromAttempt: now - attempted });
    };
    const socket = connect({ host: url.hostname, port: Number(url.port) }, () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${AUTH}\r\n` +
          'Accept: application/json\r\nConnection: close\r\n\r\n',
      );
    });
    socket.once('connectionAttempt', () => (attempted = performance.now()));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (complete(received)) finish();
    });
    // An answer without a length ends with the connection.
    socket.on('end', finish);
    socket.on('error', reject);
  });
}

const pool = new Pool(url.origin);
async function viaUndici(path: string): Promise<Timed> {
  const began = performance.now();
  const response = await pool.request({
    path,
    method: 'GET',
    reset: true,
    headers: { authorization: AUTH, accept: 'application/json' },
  });
  await response.body.text();
  const took = performance.now() - began;
  return { fromCall: took, fromAttempt: NaN };
}

const monitorClient = new ApiClient({
  baseUrl: `${url.origin}/isa/monitor`,
  apiKey: AUTH.slice('Bearer '.length),
  userAgent: 'connect-floor',
});
async function viaMonitor(): Promise<Timed> {
  const response = await ping(monitorClient, { timeoutMs: 5_000, freshConnection: true });
  if (response.statusCode !== 200) throw new Error(`monitor ping: ${response.statusCode}`);
  // The client hands the answer over a turn after the body's end (client.ts), so a clock around
  // the call would count that turn: only its own duration is shown.
  return { fromCall: NaN, fromAttempt: response.durationMs };
}

const ways = { bare, undici: viaUndici, monitor: viaMonitor } as const;
const client: Record<keyof typeof ways, Timed[]> = { bare: [], undici: [], monitor: [] };
for (let i = 0; i < count; i++) {
  for (const [name, call] of Object.entries(ways) as [keyof typeof ways, typeof bare][]) {
    client[name].push(await call(`/isa/${name}/ping`));
    await sleep(100);
  }
}
await pool.close();
await monitorClient.close();

interface TargetRecord {
  path: string;
  serverMs: number;
}
const records = (await (await fetch(`${url.origin}/__records`)).json()) as TargetRecord[];
const median = (list: number[]): number => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
};
const ms = (value: number): string => (Number.isNaN(value) ? '—' : value.toFixed(3));
process.stdout.write(
  '| way | new connections | target p50 | overhead p50 from the call | from the attempt |\n',
);
process.stdout.write('|---|---|---|---|---|\n');
for (const name of Object.keys(ways) as (keyof typeof ways)[]) {
  const server = median(
    records.filter((r) => r.path.startsWith(`/isa/${name}/`)).map((r) => r.serverMs),
  );
  const fromCall = median(client[name].map((t) => t.fromCall)) - server;
  const fromAttempt = median(client[name].map((t) => t.fromAttempt)) - server;
  process.stdout.write(
    `| ${name} | ${client[name].length} | ${ms(server)} | ${ms(fromCall)} | ${ms(fromAttempt)} |\n`,
  );
}
