/**
 * Side-by-side benchmark: isa-monitor as users run it (`isa-monitor run --config`, its own
 * process) beside Prometheus blackbox_exporter (Debian's `prometheus-blackbox-exporter`), both
 * probing one loopback target (`bench/target.ts`, its own process) that records its own time for
 * every request. What a prober reports minus what the target spent is that prober's overhead.
 *
 * Modes:
 *   compare  (default) both probers at 1 probe/s for --seconds: client overhead p50/p90/p99 in both
 *            connection modes (kept-alive, and a new connection per probe), CPU per probe, RSS
 *            steady and peak, each also as a ratio to blackbox_exporter.
 *   idle     both running with no probe due for --seconds: CPU per second.
 *   default  isa-monitor at its default schedule (2 environments, 60 s pings, 5 min lifecycle)
 *            against the simulator for --seconds (at least 600 to see two lifecycle runs per
 *            environment): amortised CPU per check run, RSS steady and peak.
 *   scale    isa-monitor alone with --environments N (default 1000) pinging every --interval
 *            (default 60s): start-up time, fire-time lateness p50/p99, /metrics size and render
 *            time, /api/status size and time, RSS steady and peak, missed and skipped runs.
 *   drift    isa-monitor alone, 1 s pings at `request_budget_per_second: 1`, for --seconds
 *            (default 600): fire-time lateness p50/p99/max per minute and its trend (ms/min).
 *   slip     isa-monitor alone against the simulator, a ping every 5 s and a lifecycle run every
 *            minute that polls once a second for 45 s, at a budget of 1/s: how late pings go out
 *            while a lifecycle run holds the budget, and while none does.
 *
 * `--baseline DIR` (compare, idle, drift, slip) runs a second daemon from DIR/cli.js beside the
 * first, same configuration, so a change is measured against the build before it in one run: copy
 * the build aside before the change (`cp -r dist package.json node_modules/.cache/base`, where its
 * imports still resolve).
 *
 * Usage: npx tsx bench/blackbox.ts [--mode compare|idle|default|scale|drift|slip] [--seconds S]
 *                                  [--environments N] [--interval 60s] [--baseline DIR]
 * Needs `npm run build` first (the daemon runs from dist/, as users run it) and, for compare and
 * idle, `prometheus-blackbox-exporter` (apt-get install prometheus-blackbox-exporter). Every
 * process it starts listens on 127.0.0.1 and is stopped at the end, also on Ctrl-C.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli.js');
const BLACKBOX = '/usr/bin/prometheus-blackbox-exporter';
const API_KEY = 'bench-key';
/** Linux reports process CPU time in clock ticks; 100 per second on every kernel we run on. */
const CLOCK_TICKS_PER_SECOND = 100;
const WARMUP_MS = 8_000;
/**
 * V8's memory reducer runs a few full collections some 15-30 s after start-up (seen with
 * --trace-gc); an idle measurement starts after them, so it measures rest, not start-up.
 */
const IDLE_WARMUP_MS = 40_000;

interface TargetRecord {
  path: string;
  arrivedAt: number;
  serverMs: number;
  newConnection: boolean;
}

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'compare' },
    seconds: { type: 'string' },
    environments: { type: 'string', default: '1000' },
    interval: { type: 'string', default: '60s' },
    baseline: { type: 'string' },
  },
});
const mode = values.mode ?? 'compare';
const defaultSeconds: Record<string, number> = {
  compare: 120,
  idle: 120,
  default: 660,
  scale: 180,
  drift: 600,
  slip: 300,
};
if (!(mode in defaultSeconds)) {
  fail(`--mode must be compare, idle, default, scale, drift or slip (got ${mode})`);
}
const BASELINE_CLI = values.baseline === undefined ? undefined : join(values.baseline, 'cli.js');
if (BASELINE_CLI !== undefined && !existsSync(BASELINE_CLI)) fail(`${BASELINE_CLI} is missing`);
const seconds = Number(values.seconds ?? defaultSeconds[mode]);
if (!(seconds > 0)) fail('--seconds must be a positive number');
if (!existsSync(CLI)) fail('dist/cli.js is missing: run `npm run build` first');

const children: ChildProcess[] = [];
const tmp = mkdtempSync(join(tmpdir(), 'isa-bench-'));
let cleanedUp = false;
function cleanup(): void {
  if (cleanedUp) return;
  cleanedUp = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  // A daemon may still write its state file while it stops: retry a non-empty directory.
  rmSync(tmp, { recursive: true, force: true, maxRetries: 5 });
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    cleanup();
    process.exit(130);
  });
}

function fail(message: string): never {
  process.stderr.write(`bench/blackbox: ${message}\n`);
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// Processes

/** Starts a child and resolves with the first stdout line matching `ready`. */
function start(
  command: string,
  args: string[],
  ready: RegExp,
  opts: { env?: NodeJS.ProcessEnv; output?: string[] } = {},
): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    let found = false;
    lines.on('line', (line) => {
      opts.output?.push(line);
      if (!found && ready.test(line)) {
        found = true;
        resolve({ child, line });
      }
    });
    child.once('exit', (code) => {
      if (!found) reject(new Error(`${command} exited ${code}: ${stderr.join('').slice(-2000)}`));
    });
  });
}

async function startTarget(upstream?: string): Promise<string> {
  const { line } = await start(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'bench', 'target.ts'),
      ...(upstream === undefined ? [] : ['--upstream', upstream]),
    ],
    /^listening /,
  );
  return line.replace(/^listening /, '').trim();
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

interface Daemon {
  child: ChildProcess;
  url: string;
  logs: string[];
  startupMs: number;
}

/** The Node options on a script's `#!/usr/bin/env -S node …` line. */
function interpreterOptions(script: string): string[] {
  const first = readFileSync(script, 'utf8').split('\n', 1)[0] ?? '';
  const match = /^#!\/usr\/bin\/env -S node (.+)$/.exec(first);
  return match?.[1]?.split(' ').filter(Boolean) ?? [];
}

/** Runs `isa-monitor run --config` as users do, and waits until /readyz answers 200. */
async function startDaemon(config: object, cli = CLI): Promise<Daemon> {
  const file = join(tmp, `isa-monitor-${children.length}.json`);
  writeFileSync(file, JSON.stringify(config));
  const logs: string[] = [];
  const began = performance.now();
  // As the `isa-monitor` command runs it: with the Node options of its interpreter line.
  const { child } = await start(
    process.execPath,
    [...interpreterOptions(cli), cli, 'run', '--config', file],
    /serving/,
    {
      output: logs,
      env: { NODE_ENV: 'production' },
    },
  );
  const serving = logs.map(parseJson).find((l) => typeof l?.['url'] === 'string');
  const url = String(serving?.['url']);
  for (;;) {
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    if (performance.now() - began > 60_000) fail('the daemon did not become ready within 60 s');
    await sleep(20);
  }
  return { child, url, logs, startupMs: performance.now() - began };
}

async function startBlackbox(): Promise<{ child: ChildProcess; url: string }> {
  if (!existsSync(BLACKBOX)) {
    fail(
      `${BLACKBOX} is missing. Install the reference prober, then run again:\n` +
        '  sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus-blackbox-exporter',
    );
  }
  const config = join(tmp, 'blackbox.yml');
  writeFileSync(
    config,
    [
      'modules:',
      '  ping:',
      '    prober: http',
      '    timeout: 10s',
      '    http:',
      '      method: GET',
      '      valid_status_codes: [200]',
      '      preferred_ip_protocol: ip4',
      '      headers:',
      `        Authorization: Bearer ${API_KEY}`,
      '        Accept: application/json',
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    BLACKBOX,
    [`--config.file=${config}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(child);
  for (let i = 0; i < 500; i++) {
    if (
      await fetch(`${url}/-/healthy`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { child, url };
    await sleep(20);
  }
  fail('blackbox_exporter did not start');
}

// ---------------------------------------------------------------------------------------------
// Readings

/** CPU time (user + system, all threads) of a process in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of /proc/PID/stat (utime, stime) are 12 and 13 after the command name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** RSS now and its high-water mark, in MiB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number =>
    Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Samples RSS once a second while `during` runs; returns the median and the high-water mark. */
async function watchMemory<T>(
  pid: number,
  during: Promise<T>,
): Promise<{ result: T; steady: number; peak: number }> {
  const samples: number[] = [];
  let done = false;
  const result = during.finally(() => (done = true));
  while (!done) {
    samples.push(memory(pid).rss);
    await Promise.race([sleep(1000), result]);
  }
  return { result: await result, steady: quantile(samples, 0.5), peak: memory(pid).peak };
}

async function targetRecords(target: string, clear = false): Promise<TargetRecord[]> {
  const response = await fetch(`${target}/__records${clear ? '?clear=1' : ''}`);
  return (await response.json()) as TargetRecord[];
}

interface PingLog {
  /** Wall-clock ms of the log line (pino's `time`), just after the ping ended. */
  time: number;
  durationMs: number;
}

function pingLogs(logs: string[], environment: string): PingLog[] {
  const pings: PingLog[] = [];
  for (const line of logs) {
    const entry = parseJson(line);
    if (entry?.['environment'] !== environment || entry['check'] !== 'ping') continue;
    const steps = entry['steps'] as Array<{ durationMs?: number }> | undefined;
    const ms = steps?.[0]?.durationMs;
    if (typeof ms === 'number' && typeof entry['time'] === 'number') {
      pings.push({ time: entry['time'], durationMs: ms });
    }
  }
  return pings;
}

/**
 * Pairs each logged ping with the target's record of it: the record whose arrival plus the
 * reported duration lies closest before the log line. Pings are a second apart and take
 * milliseconds, so the pairing is unambiguous; one without a record within 500 ms is dropped
 * (the window's edges).
 */
function matchLogs(
  pings: PingLog[],
  server: TargetRecord[],
): { reported: number[]; server: TargetRecord[] } {
  const pairs = { reported: [] as number[], server: [] as TargetRecord[] };
  for (const ping of pings) {
    let best: TargetRecord | undefined;
    let bestGap = 500;
    for (const record of server) {
      const gap = Math.abs(ping.time - (record.arrivedAt + ping.durationMs));
      if (gap < bestGap) {
        best = record;
        bestGap = gap;
      }
    }
    if (best) {
      pairs.reported.push(ping.durationMs);
      pairs.server.push(best);
    }
  }
  return pairs;
}

// ---------------------------------------------------------------------------------------------
// Modes

function environmentConfig(name: string, baseUrl: string, ping: object, lifecycle: object) {
  return {
    name,
    base_url: baseUrl,
    api_key_file: join(tmp, 'api-key'),
    request_budget_per_second: 5,
    ping,
    lifecycle,
  };
}

function daemonConfig(environments: object[]) {
  writeFileSync(join(tmp, 'api-key'), `${API_KEY}\n`, { mode: 0o600 });
  return {
    listen: { host: '127.0.0.1', port: 0 },
    state_file: join(tmp, 'sessions.json'),
    log: { level: 'info' },
    environments,
  };
}

async function compare(): Promise<void> {
  const target = await startTarget();
  const daemon = await startDaemon(
    daemonConfig([
      environmentConfig(
        'kept',
        `${target}/isa/kept`,
        { interval: '1s', timeout: '900ms', connection: 'reuse' },
        {
          enabled: false,
        },
      ),
      environmentConfig(
        'fresh',
        `${target}/fresh/isa`,
        { interval: '1s', timeout: '900ms', connection: 'new' },
        {
          enabled: false,
        },
      ),
    ]),
  );
  // With --baseline, the build before a change pings beside this one (paths /base/…).
  const baseline =
    BASELINE_CLI === undefined
      ? undefined
      : await startDaemon(
          daemonConfig([
            environmentConfig(
              'kept-base',
              `${target}/base/kept`,
              { interval: '1s', timeout: '900ms', connection: 'reuse' },
              { enabled: false },
            ),
            environmentConfig(
              'fresh-base',
              `${target}/fresh/base`,
              { interval: '1s', timeout: '900ms', connection: 'new' },
              { enabled: false },
            ),
          ]),
          BASELINE_CLI,
        );
  const blackbox = await startBlackbox();
  const probeUrl = (path: string) =>
    `${blackbox.url}/probe?module=ping&target=${encodeURIComponent(`${target}${path}`)}`;

  await sleep(WARMUP_MS);
  const logsBefore = daemon.logs.length;
  const baselineLogsBefore = baseline?.logs.length ?? 0;
  await targetRecords(target, true);
  const cpu0 = { isa: cpuMs(daemon.child.pid!), bb: cpuMs(blackbox.child.pid!) };
  const began = performance.now();

  // blackbox_exporter probes only when asked: one probe a second, half a second after
  // isa-monitor's whole-second cron ticks so the two do not queue behind each other.
  const bbReported: number[] = [];
  const bbPhases: number[] = [];
  const driveBlackbox = (async () => {
    await sleep(500 - (Date.now() % 1000) + (Date.now() % 1000 > 500 ? 1000 : 0));
    while (performance.now() - began < seconds * 1000) {
      const tick = performance.now();
      const text = await (await fetch(probeUrl('/bb/ping'))).text();
      bbReported.push(metricValue(text, 'probe_duration_seconds') * 1000);
      bbPhases.push(sumPhases(text) * 1000);
      await sleep(Math.max(0, 1000 - (performance.now() - tick)));
    }
  })();
  const isaMem = watchMemory(daemon.child.pid!, driveBlackbox);
  const bbMem = watchMemory(blackbox.child.pid!, driveBlackbox);
  const [isa, bb] = await Promise.all([isaMem, bbMem]);
  const cpu1 = { isa: cpuMs(daemon.child.pid!), bb: cpuMs(blackbox.child.pid!) };
  await sleep(1500); // let the last isa-monitor ping's log line arrive
  const records = await targetRecords(target);
  const logs = daemon.logs.slice(logsBefore);

  const isaOverhead = (environment: string, prefix: string, from = logs): Overhead => {
    const pairs = matchLogs(
      pingLogs(from, environment),
      records.filter((r) => r.path.startsWith(prefix)),
    );
    return overhead(pairs.reported, pairs.server);
  };
  const kept = isaOverhead('kept', '/isa/');
  const fresh = isaOverhead('fresh', '/fresh/isa/');
  const bbServer = records.filter((r) => r.path.startsWith('/bb/'));
  const bbOver = overhead(bbPhases, bbServer);
  const bbTotal = overhead(bbReported, bbServer);
  const baselineLogs = baseline?.logs.slice(baselineLogsBefore) ?? [];
  const baselineRows = baseline
    ? [
        row('baseline, kept-alive', isaOverhead('kept-base', '/base/', baselineLogs), bbOver),
        row(
          'baseline, new per ping',
          isaOverhead('fresh-base', '/fresh/base/', baselineLogs),
          bbOver,
        ),
      ]
    : [];
  const isaProbes = kept.n + fresh.n;

  line(
    `compare: ${seconds} s, 1 probe/s each; isa-monitor: 2 environments (kept-alive, new connection); blackbox_exporter 0.23: new connection per probe`,
  );
  line('client overhead = reported − target server time, ms');
  table(
    [
      'prober, connection',
      'probes',
      'new conns',
      'p50',
      'p90',
      'p99',
      'p50 ×bb',
      'p90 ×bb',
      'p99 ×bb',
    ],
    [
      row('isa-monitor, kept-alive', kept, bbOver),
      row('isa-monitor, new per ping', fresh, bbOver),
      ...baselineRows,
      row('blackbox (HTTP phases)', bbOver, bbOver),
      row('blackbox (probe_duration)', bbTotal, bbOver),
    ],
  );
  const isaCpu = (cpu1.isa - cpu0.isa) / isaProbes;
  const bbCpu = (cpu1.bb - cpu0.bb) / bbOver.n;
  table(
    ['', 'isa-monitor', 'blackbox_exporter', 'ratio'],
    [
      ['CPU per probe, ms', fmt(isaCpu), fmt(bbCpu), ratio(isaCpu, bbCpu)],
      ['RSS steady, MiB', fmt(isa.steady), fmt(bb.steady), ratio(isa.steady, bb.steady)],
      ['RSS peak, MiB', fmt(isa.peak), fmt(bb.peak), ratio(isa.peak, bb.peak)],
    ],
  );
}

async function idle(): Promise<void> {
  const target = await startTarget();
  // A ping every 24 h: due at most once a day, so (almost certainly) never during the window.
  const daemons = await startBuilds((build) =>
    daemonConfig([
      environmentConfig(
        build === 'baseline' ? 'baseline' : 'idle',
        `${target}/isa`,
        { interval: '24h', timeout: '10s' },
        {
          enabled: false,
        },
      ),
    ]),
  );
  const blackbox = await startBlackbox();
  await sleep(IDLE_WARMUP_MS);
  await targetRecords(target, true);
  const pids = [...daemons.map((d) => d.daemon.child.pid!), blackbox.child.pid!];
  const cpu0 = pids.map(cpuMs);
  const window = sleep(seconds * 1000);
  const mem = await Promise.all(pids.map((pid) => watchMemory(pid, window)));
  const cpu1 = pids.map(cpuMs);
  const probes = (await targetRecords(target)).length;
  line(`idle: ${seconds} s with no probe due (${probes} requests reached the target)`);
  const names = [...daemons.map((d) => `isa-monitor (${d.build})`), 'blackbox_exporter'];
  table(
    ['', ...names],
    [
      ['CPU, ms per second', ...pids.map((_, i) => fmt((cpu1[i]! - cpu0[i]!) / seconds))],
      ['RSS steady, MiB', ...mem.map((m) => fmt(m.steady))],
      ['RSS peak, MiB', ...mem.map((m) => fmt(m.peak))],
    ],
  );
}

async function defaultSchedule(): Promise<void> {
  const { line: first } = await start(
    process.execPath,
    [CLI, 'simulate', '--port', '0', '--host', '127.0.0.1', '--api-key', API_KEY],
    /^http/,
  );
  const simulator = first.trim();
  const address = [{ street1: '1 Instant Way', zip: '80202', expect: 'available' }];
  const daemon = await startDaemon(
    daemonConfig(
      ['sandbox', 'production'].map((name) => ({
        ...environmentConfig(name, `${simulator}/env/${name}`, {}, { addresses: address }),
        request_budget_per_second: 1,
      })),
    ),
  );
  const cpu0 = cpuMs(daemon.child.pid!);
  const logsBefore = daemon.logs.length;
  const mem = await watchMemory(daemon.child.pid!, sleep(seconds * 1000));
  const cpu1 = cpuMs(daemon.child.pid!);
  const runs = daemon.logs
    .slice(logsBefore)
    .map(parseJson)
    .filter((l) => l?.['check'] === 'ping' || l?.['check'] === 'lifecycle');
  const lifecycles = runs.filter((l) => l?.['check'] === 'lifecycle').length;
  line(`default schedule: ${seconds} s, 2 environments, 60 s pings, 5 min lifecycle`);
  table(
    [
      'check runs',
      'of them lifecycle',
      'CPU, ms',
      'CPU per run, ms',
      'RSS steady, MiB',
      'RSS peak, MiB',
    ],
    [
      [
        String(runs.length),
        String(lifecycles),
        fmt(cpu1 - cpu0),
        fmt((cpu1 - cpu0) / Math.max(1, runs.length)),
        fmt(mem.steady),
        fmt(mem.peak),
      ],
    ],
  );
}

async function scale(): Promise<void> {
  const n = Number(values.environments);
  if (!(Number.isInteger(n) && n > 0)) fail('--environments must be a positive integer');
  const target = await startTarget();
  const environments = Array.from({ length: n }, (_, i) =>
    environmentConfig(
      `env-${i}`,
      `${target}/isa/env-${i}`,
      { interval: values.interval, timeout: '5s' },
      {
        enabled: false,
      },
    ),
  );
  const daemon = await startDaemon(daemonConfig(environments));
  const schedule = scheduleOffsets(daemon.logs);
  await targetRecords(target, true);
  const windowStart = Date.now();
  const { result, steady, peak } = await watchMemory(
    daemon.child.pid!,
    (async () => {
      await sleep(seconds * 1000);
      const metrics = await timedGets(`${daemon.url}/metrics`);
      const status = await timedGets(`${daemon.url}/api/status`);
      return { metrics, status };
    })(),
  );
  const records = await targetRecords(target);
  const windowMs = Date.now() - windowStart;
  const lateness = records
    .map((r) => lateMs(r, schedule))
    .filter((ms): ms is number => ms !== null);
  const intervalMs = parseSeconds(values.interval) * 1000;
  const expected = Math.round((n * windowMs) / intervalMs);
  const perEnvironment = new Map<string, number>();
  for (const r of records) perEnvironment.set(r.path, (perEnvironment.get(r.path) ?? 0) + 1);
  const counts = [...perEnvironment.values()];
  const silent = n - perEnvironment.size;
  const metricsText = await (await fetch(`${daemon.url}/metrics`)).text();
  const skipped = metricsText
    .split('\n')
    .filter((l) => l.startsWith('isa_checks_skipped_total{'))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
  line(`scale: ${n} environments, pings every ${values.interval}, ${seconds} s`);
  table(
    [
      'start-up, ms',
      'pings',
      'expected ≈',
      'skipped',
      'lateness p50',
      'p99',
      'max',
      '/metrics',
      'render p50',
      '/api/status',
      'time p50',
      'RSS steady',
      'RSS peak',
    ],
    [
      [
        fmt(daemon.startupMs),
        String(records.length),
        String(expected),
        `${Math.min(...counts)}–${Math.max(...counts)}`,
        String(silent),
        String(skipped),
        fmt(quantile(lateness, 0.5)),
        fmt(quantile(lateness, 0.99)),
        fmt(Math.max(...lateness)),
        `${fmt(result.metrics.bytes / 1e6)} MB`,
        `${fmt(result.metrics.p50)} ms`,
        `${fmt(result.status.bytes / 1e6)} MB`,
        `${fmt(result.status.p50)} ms`,
        `${fmt(steady)} MiB`,
        `${fmt(peak)} MiB`,
      ],
    ],
  );
  line(
    'lateness: the time a ping reached the target minus the instant its schedule named (includes loopback connect)',
  );
}

/** The daemons of a drift or slip run: this build, and the `--baseline` build beside it. */
async function startBuilds(
  config: (build: string) => object,
): Promise<Array<{ build: string; daemon: Daemon }>> {
  const builds = [{ build: 'this build', cli: CLI }];
  if (BASELINE_CLI !== undefined) builds.push({ build: 'baseline', cli: BASELINE_CLI });
  const started = [];
  for (const { build, cli } of builds) {
    started.push({ build, daemon: await startDaemon(config(build), cli) });
  }
  return started;
}

/**
 * 1 s pings at a budget of 1/s, the schedule that once drifted +60 ms a minute: lateness of each
 * ping's arrival at the target against the instant its schedule named, per minute, and the slope
 * of a least-squares line through all of them (ms per minute; 0 when nothing drifts).
 */
async function drift(): Promise<void> {
  const target = await startTarget();
  const daemons = await startBuilds((build) =>
    daemonConfig([
      {
        ...environmentConfig(
          build === 'baseline' ? 'baseline' : 'drift',
          `${target}/isa/${build === 'baseline' ? 'baseline' : 'drift'}`,
          { interval: '1s', timeout: '900ms' },
          { enabled: false },
        ),
        request_budget_per_second: 1,
      },
    ]),
  );
  const offsets = new Map<string, number>();
  for (const { daemon } of daemons) {
    for (const [env, offset] of scheduleOffsets(daemon.logs)) offsets.set(env, offset);
  }
  await sleep(WARMUP_MS);
  await targetRecords(target, true);
  const began = Date.now();
  await sleep(seconds * 1000);
  const records = await targetRecords(target);
  line(`drift: ${seconds} s of 1 s pings at request_budget_per_second: 1`);
  const rows: string[][] = [];
  for (const { build } of daemons) {
    const env = build === 'baseline' ? 'baseline' : 'drift';
    const points = records
      .filter((r) => r.path === `/isa/${env}/ping`)
      .map((r) => ({ at: r.arrivedAt - began, late: lateMs(r, offsets) }))
      .filter((p): p is { at: number; late: number } => p.late !== null);
    const late = points.map((p) => p.late);
    const minutes = Math.ceil(seconds / 60);
    const perMinute = Array.from({ length: minutes }, (_, m) =>
      points.filter((p) => p.at >= m * 60_000 && p.at < (m + 1) * 60_000).map((p) => p.late),
    );
    rows.push([
      build,
      String(points.length),
      String(Math.round(seconds)),
      fmt(quantile(late, 0.5)),
      fmt(quantile(late, 0.99)),
      fmt(Math.max(...late)),
      fmt(slopePerMinute(points)),
      perMinute.map((l) => fmt(quantile(l, 0.99))).join(' '),
    ]);
  }
  table(
    ['build', 'pings', 'expected', 'p50', 'p99', 'max', 'trend, ms/min', 'p99 per minute'],
    rows,
  );
  line('lateness: arrival at the target minus the instant the schedule named, ms');
}

/**
 * A ping every 5 s and a lifecycle run every minute whose polls (1 s apart, 45 s, an address that
 * never qualifies) use the whole budget of 1/s: how late each ping's request went out, split by
 * whether a lifecycle run was in flight. The target records the pings and forwards the rest to
 * the simulator (`target.ts --upstream`).
 */
async function slip(): Promise<void> {
  const { line: first } = await start(
    process.execPath,
    [CLI, 'simulate', '--port', '0', '--host', '127.0.0.1', '--api-key', API_KEY],
    /^http/,
  );
  const target = await startTarget(first.trim());
  const envName = (build: string) => (build === 'baseline' ? 'baseline' : 'slip');
  const daemons = await startBuilds((build) =>
    daemonConfig([
      {
        ...environmentConfig(
          envName(build),
          `${target}/isa/${envName(build)}`,
          { interval: '5s', timeout: '4s' },
          {
            interval: '1m',
            timeout: '55s',
            poll_interval: '1s',
            poll_timeout: '45s',
            addresses: [{ street1: '6 Forever Pending Ct', zip: '80202', expect: 'available' }],
          },
        ),
        request_budget_per_second: 1,
      },
    ]),
  );
  await targetRecords(target, true);
  await sleep(seconds * 1000);
  await sleep(1500); // the last lines
  const records = await targetRecords(target);
  line(
    `slip: ${seconds} s; a ping every 5 s, a lifecycle run every minute polling 1/s for 45 s; budget 1/s`,
  );
  const rows: string[][] = [];
  for (const { build, daemon } of daemons) {
    const env = envName(build);
    const offset = Number(
      schedule(daemon.logs).find((t) => t['check'] === 'ping' && t['environment'] === env)?.[
        'offsetMs'
      ] ?? 0,
    );
    // A lifecycle run's span: its log line's time less what it took (and waited, when it says).
    const lifecycles = daemon.logs
      .map(parseJson)
      .filter((l) => l?.['check'] === 'lifecycle' && typeof l['time'] === 'number')
      .map((l) => {
        const end = l!['time'] as number;
        return { from: end - Number(l!['durationMs']) - Number(l!['budgetWaitMs'] ?? 0), to: end };
      });
    const during: number[] = [];
    const outside: number[] = [];
    for (const r of records) {
      if (r.path !== `/isa/${env}/ping`) continue;
      const late = (((r.arrivedAt - offset) % 5000) + 5000) % 5000;
      const inFlight = lifecycles.some((l) => r.arrivedAt >= l.from && r.arrivedAt <= l.to);
      (inFlight ? during : outside).push(late);
    }
    for (const [when, late] of [
      ['during a lifecycle run', during],
      ['no lifecycle run', outside],
    ] as const) {
      rows.push([
        build,
        when,
        String(late.length),
        fmt(quantile(late, 0.5)),
        fmt(quantile(late, 0.9)),
        fmt(quantile(late, 0.99)),
        fmt(Math.max(...late)),
      ]);
    }
  }
  table(['build', 'ping sent', 'n', 'p50', 'p90', 'p99', 'max'], rows);
  line('slip: arrival of the ping at the target minus the instant its schedule named, ms');
}

/** The "schedules started" line's task list. */
function schedule(logs: string[]): Array<Record<string, unknown>> {
  for (const entry of logs.map(parseJson)) {
    if (Array.isArray(entry?.['schedule']))
      return entry['schedule'] as Array<Record<string, unknown>>;
  }
  return [];
}

/** Least-squares slope of lateness over time, in ms of lateness per minute. */
function slopePerMinute(points: Array<{ at: number; late: number }>): number {
  const n = points.length;
  if (n < 2) return NaN;
  const meanAt = points.reduce((s, p) => s + p.at, 0) / n;
  const meanLate = points.reduce((s, p) => s + p.late, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.at - meanAt) * (p.late - meanLate);
    den += (p.at - meanAt) ** 2;
  }
  return (num / den) * 60_000;
}

/** GETs `url` five times; the size of the body and the median time to the whole body. */
async function timedGets(url: string): Promise<{ bytes: number; p50: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 5; i++) {
    const began = performance.now();
    const body = await (await fetch(url)).arrayBuffer();
    times.push(performance.now() - began);
    bytes = body.byteLength;
  }
  return { bytes, p50: quantile(times, 0.5) };
}

/**
 * Sub-second offsets of each environment's ping, from the daemon's "schedules started" line
 * (entries may carry `offsetMs`, the start offset within the interval); 0 where it names none,
 * since cron ticks fall on whole seconds.
 */
function scheduleOffsets(logs: string[]): Map<string, number> {
  const offsets = new Map<string, number>();
  for (const entry of logs.map(parseJson)) {
    const schedule = entry?.['schedule'];
    if (!Array.isArray(schedule)) continue;
    for (const task of schedule as Array<Record<string, unknown>>) {
      if (task['check'] !== 'ping') continue;
      const offset = typeof task['offsetMs'] === 'number' ? task['offsetMs'] % 1000 : 0;
      offsets.set(String(task['environment']), offset);
    }
  }
  return offsets;
}

function lateMs(record: TargetRecord, offsets: Map<string, number>): number | null {
  const environment = /\/isa\/([^/]+)\/ping$/.exec(record.path)?.[1];
  if (environment === undefined) return null;
  const offset = offsets.get(environment) ?? 0;
  return (((record.arrivedAt - offset) % 1000) + 1000) % 1000;
}

// ---------------------------------------------------------------------------------------------
// Numbers

interface Overhead {
  n: number;
  newConns: number;
  p50: number;
  p90: number;
  p99: number;
}

/** Reported latencies paired index by index with the target's records; reported − server time. */
function overhead(reported: number[], server: TargetRecord[]): Overhead {
  const n = Math.min(reported.length, server.length);
  const diffs = Array.from({ length: n }, (_, i) => reported[i]! - server[i]!.serverMs);
  return {
    n,
    newConns: server.slice(0, n).filter((r) => r.newConnection).length,
    p50: quantile(diffs, 0.5),
    p90: quantile(diffs, 0.9),
    p99: quantile(diffs, 0.99),
  };
}

function row(name: string, o: Overhead, reference: Overhead): string[] {
  return [
    name,
    String(o.n),
    String(o.newConns),
    fmt(o.p50),
    fmt(o.p90),
    fmt(o.p99),
    ratio(o.p50, reference.p50),
    ratio(o.p90, reference.p90),
    ratio(o.p99, reference.p99),
  ];
}

function metricValue(text: string, name: string): number {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : NaN;
}

function sumPhases(text: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith('probe_http_duration_seconds{'))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function parseSeconds(text: string | undefined): number {
  const match = /^(\d+)(s|m)$/.exec(text ?? '');
  if (!match) fail('--interval must be whole seconds or minutes, such as 10s or 1m');
  return Number(match[1]) * (match[2] === 'm' ? 60 : 1);
}

function parseJson(text: string | undefined): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text ?? '');
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return '—';
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

function ratio(a: number, b: number): string {
  return Number.isFinite(a / b) && b > 0 ? `${(a / b).toFixed(2)}×` : '—';
}

function line(text: string): void {
  process.stdout.write(`${text}\n`);
}

function table(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmtRow = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  line(fmtRow(header));
  line(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) line(fmtRow(r));
  line('');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const modes: Record<string, () => Promise<void>> = {
  compare,
  idle,
  default: defaultSchedule,
  scale,
  drift,
  slip,
};
try {
  await modes[mode]!();
} finally {
  cleanup();
}
