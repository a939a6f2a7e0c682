/**
 * The floor under a new connection per ping in Node: client overhead (client time − the target's
 * own time) of a bare `net.connect` + request + read-to-close, against undici's `Pool` with
 * `reset: true` (what the monitor's new-connection mode asks of undici), alternately, against
 * bench/target.ts. Run with the target on one CPU and this on the other, as `--mode compare`
 * pins them, to see how much of the monitor's new-connection overhead is Node's own.
 *
 * Usage: taskset -c 0 npx tsx bench/target.ts            # prints `listening URL`
 *        taskset -c 1 npx tsx bench/connect-floor.ts URL [--count 200]
 */
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

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

/** Connects, sends one GET with `Connection: close`, reads until the server closes. */
function bare(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    const socket = connect({ host: url.hostname, port: Number(url.port) }, () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${AUTH}\r\n` +
          'Accept: application/json\r\nConnection: close\r\n\r\n',
      );
    });
    socket.on('data', () => {});
    socket.on('end', () => resolve(performance.now() - began));
    socket.on('error', reject);
  });
}

const pool = new Pool(url.origin);
async function viaUndici(path: string): Promise<number> {
  const began = performance.now();
  const response = await pool.request({
    path,
    method: 'GET',
    reset: true,
    headers: { authorization: AUTH, accept: 'application/json' },
  });
  await response.body.text();
  return performance.now() - began;
}

const ways = { bare, undici: viaUndici } as const;
const client: Record<keyof typeof ways, number[]> = { bare: [], undici: [] };
for (let i = 0; i < count; i++) {
  for (const [name, call] of Object.entries(ways) as [keyof typeof ways, typeof bare][]) {
    client[name].push(await call(`/isa/${name}/ping`));
    await sleep(100);
  }
}
await pool.close();

interface TargetRecord {
  path: string;
  serverMs: number;
}
const records = (await (await fetch(`${url.origin}/__records`)).json()) as TargetRecord[];
const median = (list: number[]): number => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
};
for (const name of Object.keys(ways) as (keyof typeof ways)[]) {
  const server = records.filter((r) => r.path.startsWith(`/isa/${name}/`)).map((r) => r.serverMs);
  process.stdout.write(
    `${name}: ${client[name].length} new connections, client p50 ${median(client[name]).toFixed(3)} ms, ` +
      `target p50 ${median(server).toFixed(3)} ms, overhead p50 ${(median(client[name]) - median(server)).toFixed(3)} ms\n`,
  );
}
