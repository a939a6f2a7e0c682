/**
 * How much CPU the same HTTP request costs when it is sent seldom: one worker thread per spacing
 * sends a GET with a new connection (undici, as the monitor's pings) to a local server every
 * `--spacings` ms and reads its own CPU time around each request (`schedstat` of the thread).
 * All spacings run at once, in separate processes, for `--seconds`. Code that runs once a minute
 * finds the caches cold and the JIT's tiering where the previous minute left it, so a ping every
 * 60 s costs more than one every second; this prints by how much, on this machine, today.
 *
 * Usage: npx tsx bench/spacing.ts [--spacings 1000,15000,60000] [--seconds 300]
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { median } from './stats.js';

interface Job {
  /** undici's entry point, resolved from here. */
  undici: string;
  url: string;
  spacingMs: number;
  count: number;
}

/**
 * The worker, as source (a worker cannot load this TypeScript file): one request every spacing,
 * its thread's CPU time around each.
 */
const WORKER = `
const { parentPort, workerData: job } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { request } = require(job.undici);
const tid = Number(readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0]);
const cpuMs = () => Number(readFileSync('/proc/self/task/' + tid + '/schedstat', 'utf8').split(' ')[0]) / 1e6;
(async () => {
  const costs = [];
  for (let i = 0; i < job.count; i++) {
    await new Promise((resolve) => setTimeout(resolve, job.spacingMs));
    const before = cpuMs();
    const res = await request(job.url, { reset: true });
    await res.body.text();
    costs.push(cpuMs() - before);
  }
  parentPort.postMessage(costs);
})();
`;

if (process.argv[2] === '--child') {
  // One process per spacing, so that no two share a thread, a heap or a JIT.
  const job = JSON.parse(process.argv[3]!) as Job;
  const worker = new Worker(WORKER, { eval: true, workerData: job });
  worker.once('message', (costs: number[]) => {
    process.stdout.write(JSON.stringify(costs));
    process.exit(0);
  });
} else {
  const { values } = parseArgs({
    options: {
      spacings: { type: 'string', default: '1000,15000,60000' },
      seconds: { type: 'string', default: '300' },
    },
  });
  const seconds = Number(values.seconds);
  const spacings = (values.spacings ?? '').split(',').map(Number);
  if (!(seconds > 0) || spacings.some((ms) => !(ms > 0))) {
    throw new Error('--seconds and --spacings: positive numbers');
  }
  const server = createServer((_req, res) => res.end('{"message":"pong"}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ping`;
  process.stdout.write(
    `spacing: one GET with a new connection every N ms, ${seconds} s, node ${process.version}\n`,
  );
  const results = await Promise.all(
    spacings.map(
      (spacingMs) =>
        new Promise<[number, number[]]>((resolve, reject) => {
          const job: Job = {
            undici: createRequire(import.meta.url).resolve('undici'),
            url,
            spacingMs,
            count: Math.floor((seconds * 1000) / spacingMs),
          };
          const child = spawn(
            process.execPath,
            [
              ...process.execArgv,
              new URL(import.meta.url).pathname,
              '--child',
              JSON.stringify(job),
            ],
            { stdio: ['ignore', 'pipe', 'inherit'] },
          );
          let out = '';
          child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
          child.once('exit', (code) =>
            code === 0
              ? resolve([spacingMs, JSON.parse(out) as number[]])
              : reject(new Error(`spacing ${spacingMs} ms: exit ${code}`)),
          );
        }),
    ),
  );
  server.close();
  process.stdout.write(
    '| spacing, ms | requests | CPU of the first, ms | CPU per request after it, median, ms |\n',
  );
  process.stdout.write('|---|---|---|---|\n');
  for (const [spacingMs, costs] of results) {
    const rest = costs.slice(1);
    process.stdout.write(
      `| ${spacingMs} | ${costs.length} | ${costs[0]?.toFixed(2) ?? '—'} | ${rest.length > 0 ? median(rest).toFixed(2) : '—'} |\n`,
    );
  }
}
