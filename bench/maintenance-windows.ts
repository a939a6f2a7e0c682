/**
 * Maintenance windows at scale (docs/configuration.md, "Maintenance windows"): how long the
 * configuration takes to validate with N windows in one environment, and how long the pings stop
 * while a reload validates 1,500 of them. Prints the numbers (bench/README.md).
 *
 *   npx tsx bench/maintenance-windows.ts [--counts 1000,2000,10000] [--shapes dense,chain,mixed]
 *     [--limit-seconds 60] [--no-reload]
 *
 * Each validation runs in a child process, killed after `--limit-seconds`: a validation that does
 * not finish is reported as such instead of holding the benchmark. The reload part starts the
 * daemon in this process with the measurement inline (test/support/daemon.ts), pinging every
 * second a loopback server in a child process that notes when each ping arrives, and validates and
 * reloads the 1,500 windows as a SIGHUP would (src/cli/run.ts) on the daemon's own thread.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CHECK_LIST } from '../src/checks/index.js';
import { parseConfigText } from '../src/config/index.js';
import { checksOffLines } from '../test/support/checks-off.js';
import { startDaemonFromYaml } from '../test/support/daemon.js';

const HOUR_MS = 3_600_000;
/** The validation's clock: windows start a day after it. */
const NOW = Date.UTC(2026, 10, 27);
const KEY = 'bench-maintenance-key';

const SHAPES = ['dense', 'chain', 'mixed', 'every5min', 'never'] as const;
type Shape = (typeof SHAPES)[number];

/**
 * `count` windows of one environment. `dense`: day-long windows starting a minute apart, all
 * overlapping. `chain`: one-hour windows starting every 30 minutes, each overlapping the next.
 * `mixed`: the chain with every tenth a daily recurring window instead. `every5min`: recurring
 * windows starting every 5 minutes in a time zone with DST, the costliest to compute. `never`:
 * schedules of a day that never comes (February 30), which croner searches to the year 9999.
 */
function windowsYaml(count: number, shape: Shape, fromMs: number): string[] {
  const lines: string[] = [];
  const [step, length] = shape === 'dense' ? [60_000, 24 * HOUR_MS] : [HOUR_MS / 2, HOUR_MS];
  for (let i = 0; i < count; i++) {
    if (shape === 'every5min' || shape === 'never') {
      const schedule = shape === 'never' ? `${i % 60} 2 30 2 *` : `${i % 5}-59/5 * * * *`;
      lines.push(
        `      - { schedule: "${schedule}", duration: 1m, timezone: America/New_York, reason: r${i} }`,
      );
      continue;
    }
    if (shape === 'mixed' && i % 10 === 0) {
      lines.push(`      - { schedule: "${i % 60} ${i % 24} * * *", duration: 1h, reason: r${i} }`);
      continue;
    }
    const start = new Date(fromMs + i * step).toISOString();
    const end = new Date(fromMs + i * step + length).toISOString();
    lines.push(`      - { start: "${start}", end: "${end}", reason: r${i} }`);
  }
  return lines;
}

function configYaml(baseUrl: string, windows: string[]): string {
  return [
    'listen: { host: 127.0.0.1, port: 0 }',
    'log: { level: error }',
    'environments:',
    '  - name: production',
    `    base_url: ${baseUrl}`,
    '    api_key_env: BENCH_API_KEY',
    '    ping: { interval: 1s, timeout: 500ms }',
    ...checksOffLines(['ping']),
    ...(windows.length > 0 ? ['    maintenance:', ...windows] : []),
  ].join('\n');
}

/** In the child: validates one configuration and prints its time and outcome as JSON. */
function validateOnce(count: number, shape: Shape): void {
  const yaml = configYaml('http://127.0.0.1:9', windowsYaml(count, shape, NOW + 24 * HOUR_MS));
  // A running daemon has validated its file once already: its code is loaded and compiled.
  for (const warm of ['chain', 'every5min'] as const) {
    const small = configYaml('http://127.0.0.1:9', windowsYaml(10, warm, NOW));
    parseConfigText(small, { checks: CHECK_LIST, env: { BENCH_API_KEY: KEY }, now: () => NOW });
  }
  const started = performance.now();
  const result = parseConfigText(yaml, {
    checks: CHECK_LIST,
    env: { BENCH_API_KEY: KEY },
    now: () => NOW,
  });
  const ms = performance.now() - started;
  const outcome = result.ok
    ? { ok: true, warnings: result.warnings.length }
    : { ok: false, problems: result.problems.length, first: result.problems[0] };
  process.stdout.write(`${JSON.stringify({ ms, ...outcome })}\n`);
}

/** Runs `validateOnce` in a child process; null when it did not finish within `limitMs`. */
function validateInChild(count: number, shape: Shape, limitMs: number): Promise<string | null> {
  const self = fileURLToPath(import.meta.url);
  const child = spawn(
    process.execPath,
    [...process.execArgv, self, '--one', String(count), '--shape', shape],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(out.trim() === '' ? null : out.trim());
    });
  });
}

/** A loopback server in a child process that prints the arrival time of each request. */
const OBSERVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  process.stdout.write('ping ' + Date.now() + '\\n');
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
});
server.listen(0, '127.0.0.1', () => process.stdout.write('port ' + server.address().port + '\\n'));
`;

interface Observer {
  url: string;
  arrivals: number[];
  stop: () => void;
}

function startObserver(): Promise<Observer> {
  const child = spawn(process.execPath, ['-e', OBSERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const arrivals: number[] = [];
  return new Promise((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      for (const line of d.toString().trim().split('\n')) {
        const [kind, value] = line.split(' ');
        if (kind === 'ping') arrivals.push(Number(value));
        if (kind === 'port') {
          resolve({
            url: `http://127.0.0.1:${value}`,
            arrivals,
            stop: () => child.kill('SIGKILL'),
          });
        }
      }
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The longest gap between pings arriving around a reload of `count` windows, in ms. */
async function reloadGap(count: number): Promise<void> {
  const observer = await startObserver();
  const dir = await mkdtemp(join(tmpdir(), 'isa-bench-maintenance-'));
  const env = { BENCH_API_KEY: KEY };
  const daemon = await startDaemonFromYaml(configYaml(observer.url, []), env, dir);
  try {
    await sleep(5_000);
    const before = observer.arrivals.length;
    const started = performance.now();
    const yaml = configYaml(observer.url, windowsYaml(count, 'dense', Date.now() + 24 * HOUR_MS));
    const loaded = parseConfigText(yaml, { checks: CHECK_LIST, env, cwd: dir });
    if (loaded.ok) await daemon.reload(loaded.config);
    else daemon.reloadRefused();
    const validateMs = performance.now() - started;
    await sleep(5_000);
    const around = observer.arrivals.slice(Math.max(0, before - 1));
    const gaps = around.slice(1).map((t, i) => t - (around[i] ?? t));
    const steady = observer.arrivals
      .slice(1, before)
      .map((t, i) => t - (observer.arrivals[i] ?? t));
    console.log(
      `reload of ${count} windows: ${loaded.ok ? 'applied' : `refused (${loaded.problems[0]?.message ?? ''})`} in ${validateMs.toFixed(0)} ms; ` +
        `longest gap between pings around it ${Math.max(...gaps)} ms (before it: ${Math.max(...steady)} ms)`,
    );
  } finally {
    await daemon.stop();
    observer.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      one: { type: 'string' },
      shape: { type: 'string', default: 'dense' },
      shapes: { type: 'string', default: SHAPES.join(',') },
      counts: { type: 'string', default: '1000,2000,10000' },
      'limit-seconds': { type: 'string', default: '60' },
      'no-reload': { type: 'boolean', default: false },
    },
  });
  if (values.one !== undefined) {
    validateOnce(Number(values.one), values.shape as Shape);
    return;
  }
  const limitMs = Number(values['limit-seconds']) * 1000;
  for (const shape of values.shapes.split(',') as Shape[]) {
    for (const count of values.counts.split(',').map(Number)) {
      const result = await validateInChild(count, shape, limitMs);
      console.log(
        `validate ${count} windows (${shape}): ${result ?? `did not finish in ${limitMs / 1000} s (killed)`}`,
      );
    }
  }
  if (!values['no-reload']) await reloadGap(1_500);
}

await main();
