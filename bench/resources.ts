/**
 * Resource benchmark: the daemon's memory and CPU for a number of environments, the figures the
 * Kubernetes requests and limits and docs/deploy.md's sizing table come from.
 *
 * For each environment count it starts the simulator (`dist/cli.js simulate`, its own process) and
 * the daemon (`dist/cli.js run`, its own process) with that many environments, all pointing at the
 * simulator under /env/<name>, runs them for the given time and reads the daemon's own process
 * metrics from /metrics every few seconds: resident memory (peak and last), heap, and CPU
 * (process_cpu_seconds_total over the run; main thread and worker together). Intervals are
 * shorter than the defaults (ping 10 s instead of 60 s, lifecycle 1 m instead of 5 m, qualify
 * resolving in 2–4 s), so the CPU figure is an upper bound for a default configuration.
 *
 * Usage: npx tsx bench/resources.ts [--environments 1,2,10] [--seconds 180]
 * Needs `npm run build` first. Talks to 127.0.0.1 only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const API_KEY = 'bench-key';
const SAMPLE_EVERY_MS = 5_000;

const { values } = parseArgs({
  options: {
    environments: { type: 'string', default: '1,2,10' },
    seconds: { type: 'string', default: '180' },
  },
});
const counts = values.environments.split(',').map(Number);
const seconds = Number(values.seconds);

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) => reject(new Error(`exited ${code} before printing its URL`)));
  });
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.split(' ')[1]);
}

async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('daemon never ready');
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

interface Row {
  environments: number;
  rssPeakMiB: number;
  rssLastMiB: number;
  heapMiB: number;
  cpuMeanCores: number;
  cpuPeakCores: number;
}

async function measure(environments: number): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'isa-bench-resources-'));
  const sim = spawn(
    process.execPath,
    ['dist/cli.js', 'simulate', '--port', '0', '--api-key', API_KEY],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  let daemon: ChildProcess | undefined;
  try {
    const simUrl = await firstLine(sim);
    writeFileSync(join(dir, 'key'), API_KEY);
    const envs = Array.from({ length: environments }, (_, i) =>
      [
        `  - name: e${i}`,
        `    base_url: ${simUrl}/env/e${i}`,
        `    api_key_file: ${join(dir, 'key')}`,
        `    ping: { interval: 10s, timeout: 5s }`,
        `    lifecycle:`,
        `      interval: 1m`,
        `      timeout: 50s`,
        `      poll_timeout: 40s`,
        `      addresses: [{ street1: '123 Main St', zip: '80202', expect: any }]`,
      ].join('\n'),
    );
    const config = [
      'listen: { host: 127.0.0.1, port: 0 }',
      `state_file: ${join(dir, 'sessions.json')}`,
      'log: { level: warn }',
      'environments:',
      ...envs,
    ].join('\n');
    writeFileSync(join(dir, 'config.yaml'), config);
    // Port 0 in the file is replaced by a fixed free port so the benchmark can find the daemon.
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    daemon = spawn(
      process.execPath,
      ['dist/cli.js', 'run', '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${port}`],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    const url = `http://127.0.0.1:${port}`;
    await waitReady(url);
    const cpuStart = await metric(url, 'process_cpu_seconds_total');
    const started = Date.now();
    let rssPeak = 0;
    let rssLast = 0;
    let heap = 0;
    let cpuPeak = 0;
    let lastCpu = cpuStart;
    let lastAt = started;
    while (Date.now() - started < seconds * 1000) {
      await new Promise((r) => setTimeout(r, SAMPLE_EVERY_MS));
      rssLast = await metric(url, 'process_resident_memory_bytes');
      rssPeak = Math.max(rssPeak, rssLast);
      heap = await metric(url, 'nodejs_heap_size_used_bytes');
      const cpu = await metric(url, 'process_cpu_seconds_total');
      const now = Date.now();
      cpuPeak = Math.max(cpuPeak, (cpu - lastCpu) / ((now - lastAt) / 1000));
      lastCpu = cpu;
      lastAt = now;
    }
    const cpuEnd = await metric(url, 'process_cpu_seconds_total');
    const mib = (b: number): number => Math.round((b / 2 ** 20) * 10) / 10;
    return {
      environments,
      rssPeakMiB: mib(rssPeak),
      rssLastMiB: mib(rssLast),
      heapMiB: mib(heap),
      cpuMeanCores:
        Math.round(((cpuEnd - cpuStart) / ((Date.now() - started) / 1000)) * 1000) / 1000,
      cpuPeakCores: Math.round(cpuPeak * 1000) / 1000,
    };
  } finally {
    if (daemon) await stop(daemon);
    await stop(sim);
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `node ${process.version}, ${seconds} s per run, samples every ${SAMPLE_EVERY_MS / 1000} s`,
);
console.log(
  'environments  rss peak MiB  rss last MiB  heap used MiB  cpu mean cores  cpu peak cores (5 s)',
);
for (const n of counts) {
  const r = await measure(n);
  console.log(
    [r.environments, r.rssPeakMiB, r.rssLastMiB, r.heapMiB, r.cpuMeanCores, r.cpuPeakCores]
      .map((v, i) => String(v).padStart(i === 0 ? 12 : 14))
      .join(''),
  );
}
