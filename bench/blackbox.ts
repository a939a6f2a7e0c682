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
 *   default  isa-monitor at its default schedule (2 environments, 60 s pings, 5 min lifecycle,
 *            15 min providers and coverage) against the simulator for --seconds (default 900:
 *            one whole cycle of that schedule, so every check runs as often as it does in any
 *            other 15 minutes), once every check has run once (up to 15 minutes after start-up;
 *            a first run compiles its check's code, a one-off cost printed apart): amortised CPU
 *            per check run (every check run is a probe), split by thread (main, measurement
 *            worker, helpers), RSS steady and peak; and blackbox_exporter probing the same
 *            simulator every 30 s (two environments' 60 s pings) in the same window: its CPU per
 *            probe, the reference for how much this machine charges code that runs that seldom.
 *   scale    isa-monitor alone with --environments N (default 1000) pinging every --interval
 *            (default 60s): start-up time, fire-time lateness p50/p99, /metrics size and render
 *            time, /api/status size and time, RSS steady and peak, missed and skipped runs.
 *   drift    isa-monitor alone, 1 s pings at `request_budget_per_second: 1`, for --seconds
 *            (default 600): fire-time lateness p50/p99/max per minute and its trend (ms/min).
 *   slip     isa-monitor alone against the simulator, a ping every 5 s and a lifecycle run every
 *            minute that polls once a second for 45 s, at a budget of 1/s: how late pings go out
 *            while a lifecycle run holds the budget, and while none does.
 *
 * `--baseline DIR` (compare, idle, default, drift, slip) runs a second daemon from DIR/cli.js beside the
 * first, same configuration, so a change is measured against the build before it in one run: copy
 * the build aside before the change (`cp -r dist package.json node_modules/.cache/base`, where its
 * imports still resolve).
 *
 * Usage: npx tsx bench/blackbox.ts [--mode compare|idle|default|scale|drift|slip] [--seconds S]
 *                                  [--environments N] [--interval 60s] [--baseline DIR]
 *                                  [--cli PATH/dist/cli.js] [--node PATH/bin/node]
 *                                  [--confirm on|off] [--hosts ip|name]
 * Needs `npm run build` first (the daemon runs from dist/, as users run it) and, for compare and
 * idle, `prometheus-blackbox-exporter` (apt-get install prometheus-blackbox-exporter). Every
 * process it starts listens on 127.0.0.1 and is stopped at the end, also on Ctrl-C.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { get as httpGet } from 'node:http';
import { createServer } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CHECK_LIST, CHECK_NAMES } from '../src/checks/index.js';

/** The checks a configuration that leaves them alone runs at a plain-HTTP target, in order. */
const DEFAULT_CHECKS: readonly string[] = CHECK_LIST.filter(
  (check) => check.config.defaults.enabled === true,
).map((check) => check.name);

const ROOT = fileURLToPath(new URL('..', import.meta.url));
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
    cli: { type: 'string' },
    // The Node.js binary this build's daemon runs on (the baseline's stays on this one's), so two
    // runtimes are measured side by side: `--node .../node-24/bin/node --baseline DIR`.
    node: { type: 'string' },
    // The baseline daemon's runtime (default: the one running this script), to compare two builds
    // on one runtime: `--node N24 --baseline DIR --baseline-node N24`.
    'baseline-node': { type: 'string' },
    // Writes the mode's headline figures as JSON to this file too (bench/footprint.ts reads it).
    summary: { type: 'string' },
    // scale: confirmation pings (on by default at 60 s pings); `off` shows what they add.
    confirm: { type: 'string', default: 'on' },
    // scale: `name` reaches the target as `localhost`, so each environment has the `resolve`
    // phase a real API's host name gives it (its series are on /metrics); `ip`, as 127.0.0.1.
    hosts: { type: 'string', default: 'ip' },
  },
});
/** The daemon as built by `npm run build`; `--cli` names another build's, to compare two versions. */
const CLI = values.cli ?? join(ROOT, 'dist', 'cli.js');
/** The runtime of this build's daemon; the baseline's is the one running this script. */
const NODE = values.node ?? process.execPath;
/** The runtime of the `--baseline` build's daemon. */
const BASELINE_NODE = values['baseline-node'] ?? process.execPath;
const mode = values.mode ?? 'compare';
const defaultSeconds: Record<string, number> = {
  compare: 120,
  idle: 120,
  ping: 600,
  default: 900,
  scale: 180,
  drift: 600,
  slip: 300,
};
if (!(mode in defaultSeconds)) {
  fail(`--mode must be compare, idle, ping, default, scale, drift or slip (got ${mode})`);
}
const BASELINE_CLI = values.baseline === undefined ? undefined : join(values.baseline, 'cli.js');
if (BASELINE_CLI !== undefined && !existsSync(BASELINE_CLI)) fail(`${BASELINE_CLI} is missing`);
const seconds = Number(values.seconds ?? defaultSeconds[mode]);
if (!(seconds > 0)) fail('--seconds must be a positive number');
if (!existsSync(CLI)) fail('dist/cli.js is missing: run `npm run build` first');

/** The mode's headline figures, written to `--summary FILE` at the end. */
const summary: Record<string, unknown> = {};

const children: ChildProcess[] = [];
const tmp = mkdtempSync(join(tmpdir(), 'isa-bench-'));
let cleanedUp = false;
function cleanup(): void {
  if (cleanedUp) return;
  cleanedUp = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  try {
    // The daemon may still be writing its state file while it stops; retried a few times.
    rmSync(tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  } catch (err) {
    process.stderr.write(`bench/blackbox: could not remove ${tmp}: ${String(err)}\n`);
  }
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

/**
 * Pins every thread of process `pid` to CPU `cpu` (`taskset`), or does nothing where there is no
 * second CPU or no `taskset`. Returns whether it pinned.
 */
function pin(pid: number, cpu: number): boolean {
  if (availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

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
  /** performance.now() just before the daemon was started. */
  began: number;
}

/**
 * What a script's `#!/usr/bin/env -S [NAME=VALUE …] node …` line gives the process: the
 * environment variables before `node` and the Node options after it.
 */
function interpreterLine(script: string): { env: Record<string, string>; options: string[] } {
  const first = readFileSync(script, 'utf8').split('\n', 1)[0] ?? '';
  const words = /^#!\/usr\/bin\/env -S (.+)$/.exec(first)?.[1]?.split(' ').filter(Boolean) ?? [];
  const node = words.indexOf('node');
  if (node === -1) return { env: {}, options: [] };
  const env = Object.fromEntries(
    words
      .slice(0, node)
      .map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
  );
  return { env, options: words.slice(node + 1) };
}

/** Runs `isa-monitor run --config` as users do, and waits until /readyz answers 200. */
async function startDaemon(config: object, cli = CLI, node = NODE): Promise<Daemon> {
  const file = join(tmp, `isa-monitor-${children.length}.json`);
  // Each daemon keeps its ledger, uptime record and contract baselines in a folder of its own:
  // two builds sharing one would each read and take the other's writes.
  const own = join(tmp, `daemon-${children.length}`);
  mkdirSync(own);
  const stateFile = (config as { state_file?: string }).state_file ?? 'sessions.json';
  writeFileSync(file, JSON.stringify({ ...config, state_file: join(own, basename(stateFile)) }));
  const logs: string[] = [];
  const began = performance.now();
  // As the `isa-monitor` command runs it: with the Node options and environment of its
  // interpreter line.
  const interpreter = interpreterLine(cli);
  const { child } = await start(
    node,
    [...interpreter.options, cli, 'run', '--config', file],
    /serving/,
    {
      output: logs,
      env: { ...interpreter.env, NODE_ENV: 'production' },
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
  return { child, url, logs, startupMs: performance.now() - began, began };
}

/** The address that has blackbox_exporter probe `target` once with the `ping` module. */
function blackboxProbeUrl(blackbox: { url: string }, target: string): string {
  return `${blackbox.url}/probe?module=ping&target=${encodeURIComponent(target)}`;
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

/** Least distance, ms within the second, between two probers' 1 s pings in compare mode. */
const COMPARE_SPACING_MS = 100;

/** The daemon's ping offsets within the second, from its "schedules started" log line. */
async function pingPhases(daemon: Daemon): Promise<number[]> {
  for (const began = performance.now(); performance.now() - began < 10_000; await sleep(20)) {
    const started = daemon.logs.map(parseJson).find((l) => Array.isArray(l?.['schedule']));
    if (!started) continue;
    const schedule = started['schedule'] as { check: string; offsetMs: number }[];
    return schedule.filter((s) => s.check === 'ping').map((s) => s.offsetMs % 1000);
  }
  return fail('the daemon did not log its schedule within 10 s');
}

/** Circular distance within a second, ms. */
const phaseGap = (a: number, b: number): number => {
  const d = Math.abs(a - b) % 1000;
  return Math.min(d, 1000 - d);
};

/**
 * Starts a compare-mode daemon whose pings (random offsets within the second, as every daemon
 * draws them) land at least `COMPARE_SPACING_MS` from each other and from `taken`, restarting it
 * until they do. Two probes that reach the target in the same millisecond are served one after
 * the other, and the second one's overhead would include the first one's service time.
 */
async function startSpacedDaemon(
  config: object,
  taken: number[],
  cli = CLI,
): Promise<{ daemon: Daemon; phases: number[] }> {
  for (let attempt = 1; ; attempt++) {
    const daemon = await startDaemon(config, cli);
    const phases = await pingPhases(daemon);
    const all = [...taken, ...phases];
    const spaced = all.every((a, i) =>
      all.every((b, j) => i === j || phaseGap(a, b) >= COMPARE_SPACING_MS),
    );
    if (spaced) return { daemon, phases };
    daemon.child.kill('SIGTERM');
    await new Promise((resolve) => daemon.child.once('exit', resolve));
    if (attempt === 30) fail(`no spaced ping offsets in 30 starts (last: ${phases.join(', ')} ms)`);
  }
}

/** The middle of the widest gap between `phases` (ms within the second): where blackbox probes. */
function widestGapMiddle(phases: number[]): number {
  const sorted = [...phases].sort((a, b) => a - b);
  let best = { gap: -1, middle: 500 };
  sorted.forEach((phase, i) => {
    const next = i + 1 < sorted.length ? sorted[i + 1]! : sorted[0]! + 1000;
    if (next - phase > best.gap)
      best = { gap: next - phase, middle: (phase + (next - phase) / 2) % 1000 };
  });
  return Math.round(best.middle);
}

async function compare(): Promise<void> {
  const target = await startTarget();
  // The target on one CPU, every prober on the other: each prober's answer is then read on a
  // core the target is not using, as from another machine, and all of them alike. Left to the
  // kernel, whether a daemon's measurement thread shared the target's core was decided at its
  // start and shifted its overheads by most of a millisecond, one way for one run and the other
  // way for the next (bench/LOG.md, "Compare: probes spaced apart, probers pinned").
  const targetChild = children.at(-1)!;
  const pinned = pin(targetChild.pid!, 0);
  const { daemon, phases } = await startSpacedDaemon(
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
    [],
  );
  // With --baseline, the build before a change pings beside this one (paths /base/…).
  const baselineStarted =
    BASELINE_CLI === undefined
      ? undefined
      : await startSpacedDaemon(
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
          phases,
          BASELINE_CLI,
        );
  const baseline = baselineStarted?.daemon;
  const isaPhases = [...phases, ...(baselineStarted?.phases ?? [])];
  const blackboxPhase = widestGapMiddle(isaPhases);
  const blackbox = await startBlackbox();
  if (pinned)
    for (const prober of [daemon, baseline, blackbox]) if (prober) pin(prober.child.pid!, 1);
  const probeUrl = (path: string) => blackboxProbeUrl(blackbox, `${target}${path}`);

  await sleep(WARMUP_MS);
  const logsBefore = daemon.logs.length;
  const baselineLogsBefore = baseline?.logs.length ?? 0;
  await targetRecords(target, true);
  const cpu0 = { isa: cpuMs(daemon.child.pid!), bb: cpuMs(blackbox.child.pid!) };
  const began = performance.now();

  // blackbox_exporter probes only when asked: one probe a second, in the middle of the widest
  // gap between isa-monitor's pings, so that no two probes queue behind each other.
  const bbReported: number[] = [];
  const bbPhases: number[] = [];
  const driveBlackbox = (async () => {
    await sleep((blackboxPhase - (Date.now() % 1000) + 1000) % 1000);
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
  const ms = (list: number[]) => list.map((p) => `${p}`).join(' and ');
  line(
    `within each second, ms: this build pings at ${ms(phases)}` +
      (baselineStarted ? `, the baseline at ${ms(baselineStarted.phases)}` : '') +
      `, blackbox_exporter at ${blackboxPhase}; ` +
      (pinned
        ? 'the target on CPU 0, the probers on CPU 1'
        : 'not pinned to CPUs (one CPU, or no taskset)'),
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
  // Two environments, as the image's example runs, each pinged every 24 h: due at most once a day,
  // so (almost certainly) never during the window.
  const daemons = await startBuilds((build) =>
    daemonConfig(
      ['sandbox', 'production'].map((name) =>
        environmentConfig(
          build === 'baseline' ? `baseline-${name}` : name,
          `${target}/isa`,
          { interval: '24h', timeout: '10s' },
          { enabled: false },
        ),
      ),
    ),
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
  line(`idle: ${seconds} s, 2 environments, no probe due (${probes} requests reached the target)`);
  const names = [...daemons.map((d) => `isa-monitor (${d.build})`), 'blackbox_exporter'];
  table(
    ['', ...names],
    [
      ['CPU, ms per second', ...pids.map((_, i) => fmt((cpu1[i]! - cpu0[i]!) / seconds))],
      ['RSS steady, MiB', ...mem.map((m) => fmt(m.steady))],
      ['RSS peak, MiB', ...mem.map((m) => fmt(m.peak))],
    ],
  );
  summary['idle'] = names.map((name, i) => ({
    name,
    cpuMsPerSecond: (cpu1[i]! - cpu0[i]!) / seconds,
    rssSteadyMiB: mem[i]!.steady,
    rssPeakMiB: mem[i]!.peak,
  }));
}

/**
 * The ping at its default schedule and nothing else: two environments pinged every 60 s (every
 * other check off), blackbox_exporter asked to probe the same target at the same rate (two probes
 * a minute, between the daemons' pings). CPU per scheduled ping is all of a process's threads over
 * the window, rest included, divided by the requests it sent; blackbox_exporter's per probe
 * includes answering the probe request, as a daemon's would include a scrape (none here).
 */
async function pingSchedule(): Promise<void> {
  const target = await startTarget();
  const others = Object.fromEntries(
    CHECK_NAMES.filter((name) => name !== 'ping').map((name) => [name, { enabled: false }]),
  );
  const pathOf = (build: string, name: string) => `${build === 'baseline' ? 'b-' : ''}${name}`;
  const daemons = await startBuilds((build) =>
    daemonConfig(
      ['sandbox', 'production'].map((name) => ({
        ...environmentConfig(
          pathOf(build, name),
          `${target}/isa/${pathOf(build, name)}`,
          { interval: '60s', timeout: '10s' },
          { enabled: false },
        ),
        ...others,
      })),
    ),
  );
  // A first ping compiles what every later one runs (undici's parser among it): the window starts
  // once each environment has pinged, as the default mode's does.
  const { blackbox, probing } = await probeBesideUntilWarm(
    daemons,
    `${target}/isa/blackbox/ping`,
    pathOf,
    ['ping'],
  );
  await sleep(5_000);
  await targetRecords(target, true);
  const pids = [...daemons.map((d) => d.daemon.child.pid!), blackbox.child.pid!];
  const threads0 = pids.map(threadCpuMs);
  const cpu0 = threads0.map(sumValues);
  const probes0 = probing.probes();
  const window = sleep(seconds * 1000);
  const mem = await Promise.all(pids.map((pid) => watchMemory(pid, window)));
  const threads1 = pids.map(threadCpuMs);
  const cpu1 = threads1.map(sumValues);
  const main = pids.map((pid, i) => splitThreads(threads0[i]!, threads1[i]!, pid).main);
  const probes = probing.probes() - probes0;
  await probing.stop();
  const records = await targetRecords(target);
  const sent = daemons.map(
    (d) =>
      records.filter((r) =>
        ['sandbox', 'production'].some((name) =>
          r.path.startsWith(`/isa/${pathOf(d.build, name)}/`),
        ),
      ).length,
  );
  const perPing = [...sent, probes].map((n, i) => (cpu1[i]! - cpu0[i]!) / Math.max(1, n));
  const bb = perPing[perPing.length - 1]!;
  line(
    `ping: ${seconds} s, 2 environments pinged every 60 s, nothing else; blackbox_exporter probing the same target twice a minute`,
  );
  const names = [...daemons.map((d) => `isa-monitor (${d.build})`), 'blackbox_exporter'];
  table(
    ['', ...names],
    [
      ['requests', ...[...sent, probes].map(String)],
      ['CPU, ms', ...pids.map((_, i) => fmt(cpu1[i]! - cpu0[i]!))],
      ['of it on the main thread, ms', ...main.map(fmt)],
      ['CPU per ping, ms', ...perPing.map(fmt)],
      ['÷ blackbox_exporter', ...perPing.map((p) => ratio(p, bb))],
      ['RSS steady, MiB', ...mem.map((m) => fmt(m.steady))],
      ['RSS peak, MiB', ...mem.map((m) => fmt(m.peak))],
    ],
  );
  summary['ping'] = names.map((name, i) => ({
    name,
    requests: [...sent, probes][i],
    cpuMsPerPing: perPing[i],
    ratioToBlackbox: perPing[i]! / bb,
    rssSteadyMiB: mem[i]!.steady,
    rssPeakMiB: mem[i]!.peak,
  }));
}

/**
 * blackbox_exporter beside the daemons, asked to probe `target` every 30 s (the rate of two
 * environments pinged every 60 s), and the wait until each daemon's sandbox and production have run
 * `checks` once, and the memory reducer's collections after start-up are over.
 */
async function probeBesideUntilWarm(
  daemons: Array<{ build: string; daemon: Daemon }>,
  target: string,
  environment: (build: string, name: string) => string,
  checks: readonly string[] = DEFAULT_CHECKS,
): Promise<{
  blackbox: { child: ChildProcess; url: string };
  probing: ReturnType<typeof driveProbes>;
}> {
  const blackbox = await startBlackbox();
  const probing = driveProbes(blackboxProbeUrl(blackbox, target), 30_000);
  await sleep(IDLE_WARMUP_MS);
  await Promise.all(
    daemons.map((d) =>
      firstRuns(
        d.daemon.logs,
        ['sandbox', 'production'].map((name) => environment(d.build, name)),
        checks,
      ),
    ),
  );
  return { blackbox, probing };
}

/**
 * Asks blackbox_exporter to probe once every `everyMs` until stopped; counts the probes, and
 * those that failed.
 */
function driveProbes(
  url: string,
  everyMs: number,
): { probes(): number; failed(): number; stop(): Promise<void> } {
  let probing = true;
  let probes = 0;
  let failed = 0;
  const done = (async () => {
    while (probing) {
      const text = await (await fetch(url)).text();
      probes++;
      if (metricValue(text, 'probe_success') !== 1) failed++;
      for (const until = performance.now() + everyMs; probing && performance.now() < until;) {
        await sleep(Math.min(1000, until - performance.now()));
      }
    }
  })();
  return {
    probes: () => probes,
    failed: () => failed,
    stop: async () => {
      probing = false;
      await done;
    },
  };
}

async function defaultSchedule(): Promise<void> {
  const { line: first } = await start(
    process.execPath,
    [CLI, 'simulate', '--port', '0', '--host', '127.0.0.1', '--api-key', API_KEY],
    /^http/,
  );
  const simulator = first.trim();
  const address = [{ street1: '1 Instant Way', zip: '80202', expect: 'available' }];
  // Each build has its own environments on the simulator and its own ledger.
  const prefix = (build: string) => (build === 'baseline' ? 'base-' : '');
  const daemons = await startBuilds((build) => ({
    ...daemonConfig(
      ['sandbox', 'production'].map((name) => ({
        ...environmentConfig(
          `${prefix(build)}${name}`,
          `${simulator}/env/${prefix(build)}${name}`,
          {},
          { addresses: address },
        ),
        request_budget_per_second: 1,
      })),
    ),
    state_file: join(tmp, `sessions-${prefix(build)}default.json`),
  }));
  // Amortised over the daemon's life, compiling a check's code for its first run is a one-off
  // cost: the window starts once every check of every environment has run once (providers and
  // coverage first run up to 15 minutes after start-up), and what that took is printed apart.
  const pids = daemons.map((d) => d.daemon.child.pid!);
  const started = pids.map(threadCpuMs);
  const warmupStart = performance.now();
  // blackbox_exporter beside them, probing the same simulator as two environments pinged every
  // 60 s would, 30 s apart: CPU a probe costs at this spacing, on this machine, in this run. Code
  // that runs once a minute runs cold (caches, tiering), so a figure from one day is comparable
  // only to the reference's in the same run.
  const { blackbox, probing } = await probeBesideUntilWarm(
    daemons,
    `${simulator}/env/blackbox/ping`,
    (build, name) => `${prefix(build)}${name}`,
  );
  // The last first run's own work (its log line, the sweep after it) ends within a few seconds.
  await sleep(10_000);
  const warmupSeconds = (performance.now() - warmupStart) / 1000;
  const threads0 = pids.map(threadCpuMs);
  const bb0 = { cpu: sumValues(threadCpuMs(blackbox.child.pid!)), probes: probing.probes() };
  const logsBefore = daemons.map((d) => d.daemon.logs.length);
  const window = sleep(seconds * 1000);
  const mem = await Promise.all(pids.map((pid) => watchMemory(pid, window)));
  const threads1 = pids.map(threadCpuMs);
  const bb1 = { cpu: sumValues(threadCpuMs(blackbox.child.pid!)), probes: probing.probes() };
  await probing.stop();
  line(
    `default schedule: ${seconds} s, 2 environments, 60 s pings, 5 min lifecycle, 15 min providers and coverage`,
  );
  line(
    `warm-up: ${warmupSeconds.toFixed(0)} s after start-up, until every check had run once; its CPU, ms: ` +
      daemons
        .map((d, i) => `${d.build} ${fmt(sumValues(threads0[i]!) - sumValues(started[i]!))}`)
        .join(', '),
  );
  const perRun: number[] = [];
  const rows = daemons.map((d, i) => {
    // Every check run is a probe: the providers and coverage checks are on by default too (every
    // 15 min), and their CPU is in the window whether or not they are counted.
    const runs = d.daemon.logs
      .slice(logsBefore[i])
      .map(parseJson)
      .filter((l) => typeof l?.['check'] === 'string' && 'outcome' in l);
    const count = (check: string) => runs.filter((l) => l?.['check'] === check).length;
    const split = splitThreads(threads0[i]!, threads1[i]!, pids[i]!);
    const total = split.main + split.worker + split.helpers;
    perRun.push(total / Math.max(1, runs.length));
    return [
      d.build,
      String(runs.length),
      DEFAULT_CHECKS.map(count).join(', '),
      fmt(total),
      fmt(split.main),
      fmt(split.worker),
      fmt(split.helpers),
      fmt(perRun[i]!),
      fmt(mem[i]!.steady),
      fmt(mem[i]!.peak),
    ];
  });
  table(
    [
      'build',
      'check runs',
      DEFAULT_CHECKS.join(', '),
      'CPU, ms',
      'main',
      'worker',
      'helpers',
      'CPU per run, ms',
      'RSS steady, MiB',
      'RSS peak, MiB',
    ],
    rows,
  );
  line('');
  line(
    'CPU by thread (schedstat run time): main, the measurement worker, and the rest (V8 ' +
      'platform threads: GC and compilation; the libuv pool: file system)',
  );
  const bbProbes = bb1.probes - bb0.probes;
  const bbCpu = bb1.cpu - bb0.cpu;
  const bbPerProbe = bbCpu / Math.max(1, bbProbes);
  line(
    `blackbox_exporter in the same window: ${bbProbes} probes of the simulator's ping, one every ` +
      `30 s (${probing.failed()} failed in the whole run), CPU ${fmt(bbCpu)} ms, ` +
      `${fmt(bbPerProbe)} ms per probe; isa-monitor's CPU per run over ` +
      `blackbox_exporter's per probe: ` +
      daemons.map((d, i) => `${d.build} ${(perRun[i]! / bbPerProbe).toFixed(1)}×`).join(', ') +
      ' (a lifecycle run is several requests, a probe one)',
  );
  summary['default'] = {
    builds: daemons.map((d, i) => ({
      name: `isa-monitor (${d.build})`,
      cpuMsPerRun: perRun[i],
      rssSteadyMiB: mem[i]!.steady,
      rssPeakMiB: mem[i]!.peak,
    })),
    blackboxCpuMsPerProbe: bbPerProbe,
  };
}

function sumValues(m: Map<number, number>): number {
  return [...m.values()].reduce((a, b) => a + b, 0);
}

/**
 * Resolves once the log shows a finished run of every default check in each environment named.
 * A check's first run compiles its code; a check every 15 minutes first runs up to 15 minutes in.
 */
async function firstRuns(
  logs: string[],
  environments: string[],
  checks: readonly string[] = DEFAULT_CHECKS,
): Promise<void> {
  const wanted = environments.flatMap((e) => checks.map((c) => `${e}/${c}`));
  const seen = new Set<string>();
  let read = 0;
  for (;;) {
    for (; read < logs.length; read++) {
      const l = parseJson(logs[read]!);
      if (typeof l?.['check'] === 'string' && 'outcome' in l)
        seen.add(`${String(l['environment'])}/${l['check']}`);
    }
    if (wanted.every((w) => seen.has(w))) return;
    await sleep(1000);
  }
}

/**
 * CPU time of each thread of a process, ms, by thread id: the time the scheduler ran it
 * (`/proc/PID/task/TID/schedstat`, nanoseconds), where the kernel has it, else user + system time
 * in 10 ms ticks. A ping costs a few milliseconds, so ticks would hide it.
 */
function threadCpuMs(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(Number(tid), threadMs(`/proc/${pid}/task/${tid}`));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

function threadMs(dir: string): number {
  if (existsSync(`${dir}/schedstat`)) {
    return Number(readFileSync(`${dir}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  }
  const stat = readFileSync(`${dir}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/**
 * Splits a window's CPU between the main thread (its id is the process's), the measurement
 * worker and the rest. Node names none of its threads, so the worker is told apart by what it
 * did before the window: it compiled and started the engine, far more CPU than any V8 or libuv
 * helper thread spends in the daemon's start-up.
 */
function splitThreads(
  before: Map<number, number>,
  after: Map<number, number>,
  pid: number,
): { main: number; worker: number; helpers: number } {
  let workerTid = -1;
  let most = -1;
  for (const [tid, ms] of before) {
    if (tid !== pid && ms > most) [workerTid, most] = [tid, ms];
  }
  const split = { main: 0, worker: 0, helpers: 0 };
  for (const [tid, ms] of after) {
    const used = ms - (before.get(tid) ?? 0);
    if (tid === pid) split.main += used;
    else if (tid === workerTid) split.worker += used;
    else split.helpers += used;
  }
  return split;
}

async function scale(): Promise<void> {
  const n = Number(values.environments);
  if (!(Number.isInteger(n) && n > 0)) fail('--environments must be a positive integer');
  const intervalMs = parseSeconds(values.interval) * 1000;
  if (values.hosts !== 'ip' && values.hosts !== 'name') fail('--hosts must be ip or name');
  const listening = await startTarget();
  const target =
    values.hosts === 'name' ? listening.replace('//127.0.0.1:', '//localhost:') : listening;
  // Pings only: every other registered check off, as in the 1000-environment case.
  const others = Object.fromEntries(
    CHECK_NAMES.filter((name) => name !== 'ping').map((name) => [name, { enabled: false }]),
  );
  const environments = Array.from({ length: n }, (_, i) => ({
    ...environmentConfig(
      `env-${i}`,
      `${target}/isa/env-${i}`,
      {
        interval: values.interval,
        timeout: '5s',
        ...(values.confirm === 'off' ? { confirm: { enabled: false } } : {}),
      },
      { enabled: false },
    ),
    ...others,
  }));
  const daemon = await startDaemon(daemonConfig(environments));
  // Start-up ends with the first /metrics answer that shows every environment's ping scheduled.
  const firstScrape = await (await fetch(`${daemon.url}/metrics`)).text();
  const startupMs = performance.now() - daemon.began;
  const startupCpuMs = cpuMs(daemon.child.pid!);
  const scheduled = countSamples(firstScrape, 'isa_ping_interval_seconds');
  const schedule = scheduleOffsets(daemon.logs);
  if (schedule.size !== n) fail(`the daemon logged ${schedule.size} ping schedules, not ${n}`);
  await targetRecords(target, true);
  const windowStart = Date.now();
  let windowEnd = 0;
  const { result, steady, peak } = await watchMemory(
    daemon.child.pid!,
    (async () => {
      // Scraped as Prometheus does it (every 15 s, OpenMetrics, gzip) while the pings run: the
      // lateness is that of a daemon in service, not of one nobody reads.
      const scraping = scrapeEvery(`${daemon.url}/metrics`, 15_000, seconds * 1000);
      await sleep(seconds * 1000);
      windowEnd = Date.now();
      await scraping;
      const pid = daemon.child.pid!;
      const plain = await timedGets(
        `${daemon.url}/metrics`,
        { 'accept-encoding': 'identity' },
        pid,
      );
      const gzipped = await timedGets(
        `${daemon.url}/metrics`,
        { 'accept-encoding': 'gzip', accept: 'application/openmetrics-text;version=1.0.0' },
        pid,
      );
      const status = await timedGets(
        `${daemon.url}/api/status`,
        { 'accept-encoding': 'identity' },
        pid,
      );
      const one = await timedGets(
        `${daemon.url}/api/status?environment=env-1&check=ping`,
        { 'accept-encoding': 'identity' },
        pid,
      );
      return { plain, gzipped, status, one };
    })(),
  );
  // Only what was due in the window; the timed GETs after it load the daemon on purpose.
  const records = (await targetRecords(target)).filter(
    (r) => r.path.startsWith('/isa/') && r.arrivedAt < windowEnd,
  );
  const lateness = records
    .map((r) => lateMs(r, schedule, intervalMs))
    .filter((ms): ms is number => ms !== null);
  const fires = expectedFires(schedule, intervalMs, windowStart, windowEnd - 1_000);
  const missed = missedFires(fires, records);
  const metricsText = await (await fetch(`${daemon.url}/metrics`)).text();
  const skipped = sumSamples(metricsText, 'isa_checks_skipped_total');
  const { plain, gzipped, status, one } = result;
  line(
    `scale: ${CLI}, ${n} environments, pings only, every ${values.interval}, confirmation pings ` +
      `${values.confirm}, target by ${values.hosts === 'name' ? 'host name' : 'IP address'}; ${seconds} s window; ` +
      `node ${process.version}, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} at the end`,
  );
  table(
    ['measure', 'value', 'target', 'met'],
    [
      target_('start-up: exec → /readyz 200, ms', daemon.startupMs),
      target_(
        `start-up: exec → first /metrics with all ${n} scheduled (${scheduled} seen), ms`,
        startupMs,
        2000,
      ),
      target_('start-up: CPU time of the daemon until then, all threads, ms', startupCpuMs),
      target_('fire-time lateness p50, ms', quantile(lateness, 0.5)),
      target_('fire-time lateness p99, ms', quantile(lateness, 0.99), 20),
      target_('fire-time lateness max, ms', Math.max(...lateness)),
      target_(`pings due in the window (${fires.length}) that never arrived`, missed, 0),
      target_('runs skipped (isa_checks_skipped_total)', skipped, 0),
      target_('/metrics, text, MB', plain.bytes / 1e6, 5),
      target_('/metrics, text, render + transfer p50 of 5, ms', plain.p50, 250),
      target_('/metrics, text, daemon CPU per GET (10 ms ticks), ms', plain.cpu),
      target_('/metrics, OpenMetrics gzipped (as Prometheus asks), MB', gzipped.bytes / 1e6),
      target_('/metrics, OpenMetrics gzipped, p50 of 5, ms', gzipped.p50),
      target_('/metrics, OpenMetrics gzipped, daemon CPU per GET, ms', gzipped.cpu),
      target_('/api/status (whole, default limit), MB', status.bytes / 1e6),
      target_('/api/status (whole), p50 of 5, ms', status.p50),
      target_('/api/status (whole), daemon CPU per GET, ms', status.cpu),
      target_('/api/status?environment=env-1&check=ping, bytes', one.bytes),
      target_('/api/status?environment=env-1&check=ping, p50 of 5, ms', one.p50),
      target_('RSS steady (median of 1 s samples), MiB', steady, 300),
      target_('RSS peak (VmHWM, start-up included), MiB', peak),
    ],
  );
  line(
    'lateness: arrival at the target minus the instant the schedule named (includes the loopback connect)',
  );
  summary['scale'] = {
    environments: n,
    startupMs,
    rssSteadyMiB: steady,
    rssPeakMiB: peak,
    latenessP99Ms: quantile(lateness, 0.99),
    missed,
  };
}

/** The daemons of an idle, default, drift or slip run: this build, and the `--baseline` build beside it. */
async function startBuilds(
  config: (build: string) => object,
): Promise<Array<{ build: string; daemon: Daemon }>> {
  const builds = [{ build: 'this build', cli: CLI, node: NODE }];
  if (BASELINE_CLI !== undefined) {
    builds.push({ build: 'baseline', cli: BASELINE_CLI, node: BASELINE_NODE });
  }
  const started = [];
  for (const { build, cli, node } of builds) {
    if (NODE !== process.execPath || BASELINE_NODE !== process.execPath) {
      const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
      line(`${build}: Node.js ${version} (${node})`);
    }
    started.push({ build, daemon: await startDaemon(config(build), cli, node) });
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
      .map((r) => ({ at: r.arrivedAt - began, late: lateMs(r, offsets, 1000) }))
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

/** GETs `url` as Prometheus scrapes, every `everyMs` for `forMs`. */
async function scrapeEvery(url: string, everyMs: number, forMs: number): Promise<void> {
  const until = performance.now() + forMs;
  while (performance.now() + everyMs < until) {
    await sleep(everyMs);
    await rawGet(url, {
      'accept-encoding': 'gzip',
      accept: 'application/openmetrics-text;version=1.0.0',
    });
  }
}

/** A row of the scale table: the value and, where the issue sets one, the target (≤) and whether it is met. */
function target_(measure: string, value: number, limit?: number): string[] {
  if (limit === undefined) return [measure, fmt(value), '', ''];
  return [measure, fmt(value), `≤ ${limit}`, value <= limit ? 'yes' : 'NO'];
}

/**
 * GETs `url` five times with `headers`: the size of the body as sent, the median time to it, and
 * the CPU time the daemon (every thread) used per GET. On a shared machine the wall time grows
 * with the neighbours' load; the CPU time much less.
 */
async function timedGets(
  url: string,
  headers: Record<string, string>,
  pid: number,
): Promise<{ bytes: number; p50: number; cpu: number }> {
  const times: number[] = [];
  let bytes = 0;
  const cpu0 = cpuMs(pid);
  for (let i = 0; i < 5; i++) {
    const began = performance.now();
    bytes = await rawGet(url, headers);
    times.push(performance.now() - began);
  }
  return { bytes, p50: quantile(times, 0.5), cpu: (cpuMs(pid) - cpu0) / 5 };
}

/** Bytes of the body of one GET, as sent (fetch would decode gzip and hide the size on the wire). */
function rawGet(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve(bytes));
    }).on('error', reject);
  });
}

function countSamples(text: string, name: string): number {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`)).length;
}

function sumSamples(text: string, name: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

/**
 * Each environment's ping start offset within its interval, from the daemon's "schedules started"
 * line. Cron fires at whole seconds of the local clock and the scheduler waits out the rest of
 * the offset, so a ping is due at every instant ≡ offset (mod interval): for intervals that divide
 * an hour, in any time zone a whole number of minutes off UTC.
 */
function scheduleOffsets(logs: string[]): Map<string, number> {
  const offsets = new Map<string, number>();
  for (const entry of logs.map(parseJson)) {
    const schedule = entry?.['schedule'];
    if (!Array.isArray(schedule)) continue;
    for (const task of schedule as Array<Record<string, unknown>>) {
      if (task['check'] !== 'ping' || typeof task['offsetMs'] !== 'number') continue;
      offsets.set(String(task['environment']), task['offsetMs']);
    }
  }
  return offsets;
}

/** Every instant a ping was due in [from, to], per environment. */
function expectedFires(
  offsets: Map<string, number>,
  intervalMs: number,
  from: number,
  to: number,
): Array<{ environment: string; at: number }> {
  const fires: Array<{ environment: string; at: number }> = [];
  for (const [environment, offset] of offsets) {
    let at = Math.ceil((from - offset) / intervalMs) * intervalMs + offset;
    for (; at <= to; at += intervalMs) fires.push({ environment, at });
  }
  return fires;
}

/** Due pings with no arrival at the target within a second after their instant. */
function missedFires(
  fires: Array<{ environment: string; at: number }>,
  records: TargetRecord[],
): number {
  const arrivals = new Map<string, number[]>();
  for (const r of records) {
    const environment = environmentOf(r);
    if (environment === undefined) continue;
    const list = arrivals.get(environment) ?? [];
    list.push(r.arrivedAt);
    arrivals.set(environment, list);
  }
  return fires.filter(
    (f) => !(arrivals.get(f.environment) ?? []).some((t) => t >= f.at && t < f.at + 1000),
  ).length;
}

function environmentOf(record: TargetRecord): string | undefined {
  return /\/isa\/([^/]+)\/ping$/.exec(record.path)?.[1];
}

function lateMs(
  record: TargetRecord,
  offsets: Map<string, number>,
  intervalMs: number,
): number | null {
  const environment = environmentOf(record);
  const offset = environment === undefined ? undefined : offsets.get(environment);
  if (offset === undefined) return null;
  return (((record.arrivedAt - offset) % intervalMs) + intervalMs) % intervalMs;
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
  if (Number.isInteger(n)) return String(n);
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
  ping: pingSchedule,
  default: defaultSchedule,
  scale,
  drift,
  slip,
};
try {
  await modes[mode]!();
  if (values.summary !== undefined) writeFileSync(values.summary, JSON.stringify(summary, null, 2));
} finally {
  cleanup();
}
