/**
 * Measurement-accuracy benchmark: how much does a busy main thread distort the latencies the
 * monitor measures, and does moving the probes into a worker thread fix it?
 *
 * It pings the simulator (its own child process, so the server's event loop is never the one under
 * load) with the real ApiClient and compares what the client measured with what the server says it
 * spent (`Server-Timing: sim;dur=…`). The difference is everything the server did not do: loopback,
 * HTTP parsing on both sides, and any time the response sat unread because the client's event loop
 * was busy. The simulator holds each ping 20–60 ms (a latency fault, inside Server-Timing), so a
 * request is in flight about as long as against a real API. Four scenarios, the same number of
 * samples each:
 *
 *   A  probes on the main thread, no load
 *   B  probes on the main thread, main thread busy 20–50 ms every ~100 ms
 *   C  probes in a worker thread, no load
 *   D  probes in a worker thread, the same load on the main thread
 *
 * Scenarios run one at a time, interleaved in blocks (A B C D, B C D A, …) so that anything else the
 * machine does meanwhile is spread over all four instead of landing on one; the CPU other processes
 * used during each scenario is reported next to it. The loaded scenarios are also split by whether
 * a busy stretch overlapped the ping, which shows where a tail comes from. Then node-cron's firing
 * lateness is measured with the same load on the main thread: a task on the main thread against a
 * task in the worker.
 *
 * Usage: npx tsx bench/measurement.ts [--quick] [--samples N] [--cron-fires N] [--server-ms MIN-MAX]
 *                                     [--load spin|sleep]
 * Needs `npm run build` first (the simulator runs from dist/). Talks to 127.0.0.1 only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { ApiClient } from '../src/api/client.js';
import {
  BENCH_USER_AGENT,
  PROBE_GAP_MS,
  cronLateness,
  probeSeries,
  type CronFire,
  type PingSample,
  type ProbeWorkerData,
  type WorkerCommand,
  type WorkerEvent,
} from './probe.js';

const API_KEY = 'bench-key';
/** Samples per scenario per round; small enough that the rounds interleave well. */
const BLOCK_SIZE = 30;
/** Pings before each block whose samples are dropped: they reopen an idle connection. */
const WARMUP_PINGS = 3;
/**
 * The main-thread load of the issue: a synchronous stretch of 20–50 ms every 100 ms on average.
 * Start-to-start gaps vary (80–120 ms) so the stretches drift against everything else: with a
 * fixed 100 ms period they would sit at the same place in every wall-clock second and a
 * once-a-second cron task would hit all of them or none.
 */
const LOAD = { minGapMs: 80, maxGapMs: 120, minSpinMs: 20, maxSpinMs: 50 } as const;
const TARGET = { p50: 2, p99: 7 } as const;

interface Options {
  samples: number;
  cronFires: number;
  /** Server-side latency added to every ping, uniform in [min, max] ms; [0, 0] for none. */
  serverMs: [number, number];
  load: LoadKind;
}

const USAGE = `Usage: npx tsx bench/measurement.ts [--quick] [--samples N] [--cron-fires N]
                                    [--server-ms MIN-MAX] [--load spin|sleep]
  --samples N          pings per scenario (default 300; --quick: 60)
  --cron-fires N       node-cron firings per thread (default 12; --quick: 5)
  --server-ms MIN-MAX  latency the simulator adds to each ping (default 20-60; 0 for none)
  --load spin|sleep    how the main thread is kept busy: spin burns CPU (default, like
                       serializing a large scrape); sleep blocks it without using a core
  --quick              the short run (~25 s) instead of the full one (~100 s)`;

/** The options, or null when only the usage was asked for. */
function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      samples: { type: 'string' },
      'cron-fires': { type: 'string' },
      'server-ms': { type: 'string', default: '20-60' },
      load: { type: 'string', default: 'spin' },
      quick: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return null;
  const positive = (raw: string | undefined, fallback: number, name: string): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} expects a positive integer`);
    return n;
  };
  const quick = values.quick;
  const range = /^(\d+)(?:-(\d+))?$/.exec(values['server-ms']);
  const serverMs: [number, number] = [Number(range?.[1]), Number(range?.[2] ?? range?.[1])];
  if (!range || serverMs[0] > serverMs[1] || serverMs[1] > 10_000) {
    throw new Error(
      '--server-ms expects MIN-MAX in milliseconds (MIN ≤ MAX ≤ 10000), or one number',
    );
  }
  const load = values.load;
  if (load !== 'spin' && load !== 'sleep') throw new Error('--load expects spin or sleep');
  return {
    serverMs,
    load,
    samples: positive(values.samples, quick ? 60 : 300, '--samples'),
    cronFires: positive(values['cron-fires'], quick ? 5 : 12, '--cron-fires'),
  };
}

// ---------------------------------------------------------------------------------------------
// The simulator, in a child process of its own.

interface SimulatorProcess {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

async function startSimulatorProcess(): Promise<SimulatorProcess> {
  const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
  if (!existsSync(cli)) throw new Error('dist/cli.js not found: run `npm run build` first');
  const child = spawn(
    process.execPath,
    [cli, 'simulate', '--port', '0', '--host', '127.0.0.1', '--api-key', API_KEY],
    // stderr is read (and the tail kept for errors) so the child never blocks on a full pipe.
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderrTail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString()).slice(-2000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(
      () => reject(new Error('simulator did not start within 10 s')),
      10_000,
    );
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve(line.trim());
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`simulator exited (${code}) before printing its URL: ${stderrTail}`));
    });
  }).catch(async (err: unknown) => {
    await stopChild(child, exited);
    throw err;
  });
  // The benchmark promises to talk to loopback only; refuse anything else.
  if (URL.parse(url)?.hostname !== '127.0.0.1') {
    await stopChild(child, exited);
    throw new Error(`simulator URL is not on 127.0.0.1: ${url}`);
  }
  return { url, pid: child.pid, stop: () => stopChild(child, exited) };
}

/**
 * Makes the simulator hold every ping for a random [min, max] ms before answering, through its
 * admin API. The wait is inside Server-Timing, so it cancels out of (measured − server time); what
 * it changes is how long each request is in flight, and so how likely a main-thread stall is to
 * land while a response is waiting. A real API answers in tens of milliseconds, not the ~1 ms of
 * an idle loopback server, so without this the benchmark would understate the problem.
 */
async function addServerLatency(url: string, [min, max]: [number, number]): Promise<void> {
  if (max === 0) return;
  const response = await fetch(`${url}/__sim/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      endpoint: 'ping',
      fault: { kind: 'latency', distribution: { min, max } },
    }),
  });
  await response.arrayBuffer();
  if (response.status !== 201)
    throw new Error(`simulator refused the latency rule: ${response.status}`);
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------------
// The main-thread load.

/**
 * - spin: the thread computes (CPU-bound), as when serializing a large scrape or a log burst.
 * - sleep: the thread is blocked but uses no CPU (Atomics.wait), as in a synchronous write to a
 *   slow pipe. Comparing the two tells event-loop blocking apart from competition for a core.
 */
type LoadKind = 'spin' | 'sleep';

/** A synchronous stretch of 20–50 ms every 100 ms on the main thread. */
class MainThreadLoad {
  #timer: NodeJS.Timeout | null = null;
  #startedAt = 0;
  readonly #sleeper = new Int32Array(new SharedArrayBuffer(4));
  /** Every busy stretch, [start, end] in epoch ms (see `epochNow`). */
  readonly stretches: [number, number][] = [];
  busyMs = 0;
  loadedMs = 0;
  /** Loop iterations of all spins; kept so the spin cannot be optimised away. */
  turns = 0;

  constructor(readonly kind: LoadKind) {}

  start(): void {
    this.#startedAt = performance.now();
    let nextAt = this.#startedAt;
    const schedule = (): void => {
      nextAt += LOAD.minGapMs + Math.random() * (LOAD.maxGapMs - LOAD.minGapMs);
      this.#timer = setTimeout(tick, Math.max(0, nextAt - performance.now()));
    };
    const tick = (): void => {
      this.#stretch(LOAD.minSpinMs + Math.random() * (LOAD.maxSpinMs - LOAD.minSpinMs));
      schedule();
    };
    schedule();
  }

  stop(): void {
    if (this.#timer === null) return;
    clearTimeout(this.#timer);
    this.#timer = null;
    this.loadedMs += performance.now() - this.#startedAt;
  }

  /** Whether a busy stretch overlapped the window [start, end] (epoch ms). */
  overlaps(start: number, end: number): boolean {
    return this.stretches.some(([s, e]) => s < end && e > start);
  }

  #stretch(ms: number): void {
    const start = performance.now();
    if (this.kind === 'sleep') {
      Atomics.wait(this.#sleeper, 0, 0, ms);
    } else {
      // A spin that allocates nothing, so the load is CPU time and not garbage collection.
      const end = start + ms;
      let turns = 0;
      while (performance.now() < end) turns++;
      this.turns += turns;
    }
    const stop = performance.now();
    this.busyMs += stop - start;
    this.stretches.push([performance.timeOrigin + start, performance.timeOrigin + stop]);
  }
}

// ---------------------------------------------------------------------------------------------
// The probing worker.

/** The main thread's handle on bench/probe-worker.ts; one command at a time. */
class ProbeWorker {
  readonly #worker: Worker;
  #onEvent: ((event: WorkerEvent) => void) | null = null;
  #onFailure: ((err: Error) => void) | null = null;
  /** Set once the worker fails or exits; every later command is refused with it. */
  #failure: Error | null = null;

  constructor(data: ProbeWorkerData) {
    this.#worker = new Worker(workerEntry(), { workerData: data });
    const fail = (err: Error): void => {
      this.#failure ??= err;
      this.#onFailure?.(err);
    };
    this.#worker.on('message', (event: WorkerEvent) => {
      if (event.type === 'failed') fail(new Error(`worker: ${event.message}`));
      else this.#onEvent?.(event);
    });
    this.#worker.on('error', fail);
    this.#worker.on('exit', (code) => fail(new Error(`worker exited (${code})`)));
  }

  probe(count: number, warmup: number): Promise<PingSample[]> {
    const samples: PingSample[] = [];
    return this.#command({ type: 'probe', count, warmup }, (event) => {
      if (event.type === 'sample') samples.push(event.sample);
      return event.type === 'probe-done' ? samples : undefined;
    });
  }

  cron(fires: number): Promise<CronFire[]> {
    const collected: CronFire[] = [];
    return this.#command({ type: 'cron', fires }, (event) => {
      if (event.type === 'cron-fire') collected.push(event.fire);
      return event.type === 'cron-done' ? collected : undefined;
    });
  }

  async close(): Promise<void> {
    if (this.#failure === null) {
      await this.#command({ type: 'close' }, (event) =>
        event.type === 'closed' ? true : undefined,
      );
    }
    this.#onFailure = null;
    await this.#worker.terminate();
  }

  /** Sends a command and feeds its events to `collect` until that returns a result. */
  #command<T>(command: WorkerCommand, collect: (event: WorkerEvent) => T | undefined): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#failure !== null) {
        reject(this.#failure);
        return;
      }
      this.#onFailure = reject;
      this.#onEvent = (event) => {
        const result = collect(event);
        if (result === undefined) return;
        this.#onEvent = null;
        resolve(result);
      };
      this.#worker.postMessage(command);
    });
  }
}

/**
 * The worker's entry. Compiled, it is probe-worker.js. From the TypeScript sources it is a small
 * bootstrap that registers tsx's loader inside the worker and then imports probe-worker.ts: on
 * Node 20 a worker does not take ESM loaders from `execArgv` (`--import tsx` there still fails
 * with ERR_UNKNOWN_FILE_EXTENSION; nodejs/node#47747), but `register()` called in the worker works.
 */
function workerEntry(): URL {
  if (!import.meta.url.endsWith('.ts')) return new URL('./probe-worker.js', import.meta.url);
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const target = new URL('./probe-worker.ts', import.meta.url).href;
  const boot =
    `import { register } from ${JSON.stringify(tsxApi)};\n` +
    `register();\n` +
    `await import(${JSON.stringify(target)});\n`;
  return new URL(`data:text/javascript,${encodeURIComponent(boot)}`);
}

// ---------------------------------------------------------------------------------------------
// The rest of the machine.

/** CPU counters at one moment, in clock ticks (Linux `/proc`). */
interface CpuSnapshot {
  total: number;
  busy: number;
  ours: number;
}

/**
 * How much CPU other processes take while the benchmark runs. On a 2-core machine a neighbour
 * that keeps one core busy leaves the worker and the simulator sharing the other with the load,
 * and that shows up in every tail; the report states it so a reader can judge a run. Linux only
 * (reads /proc); elsewhere it reports nothing.
 */
class OtherProcessesCpu {
  readonly #simulatorPid: number | undefined;
  readonly #cores = cpus().length;

  constructor(simulatorPid: number | undefined) {
    this.#simulatorPid = simulatorPid;
  }

  snapshot(): CpuSnapshot | null {
    try {
      const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
        .trim()
        .split(/\s+/)
        .slice(1)
        .map(Number);
      // user nice system idle iowait irq softirq steal (guest time is already in user).
      const [
        user = 0,
        nice = 0,
        system = 0,
        idle = 0,
        iowait = 0,
        irq = 0,
        softirq = 0,
        steal = 0,
      ] = fields;
      const busy = user + nice + system + irq + softirq + steal;
      const ours =
        processTicks('self') +
        (this.#simulatorPid === undefined ? 0 : processTicks(String(this.#simulatorPid)));
      return { total: busy + idle + iowait, busy, ours };
    } catch {
      return null;
    }
  }

  /** Cores' worth of CPU used by every other process between two snapshots. */
  othersCores(from: CpuSnapshot | null, to: CpuSnapshot | null): number | null {
    if (from === null || to === null || to.total <= from.total) return null;
    const others = to.busy - from.busy - (to.ours - from.ours);
    return Math.max(0, (others / (to.total - from.total)) * this.#cores);
  }
}

/** utime + stime of a process (all its threads), in clock ticks. */
function processTicks(pid: string): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may contain spaces.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(rest[11]) + Number(rest[12]);
}

// ---------------------------------------------------------------------------------------------
// Scenarios and statistics.

interface Scenario {
  id: 'A' | 'B' | 'C' | 'D';
  label: string;
  thread: 'main' | 'worker';
  load: boolean;
}

const SCENARIOS: readonly Scenario[] = [
  { id: 'A', label: 'main thread, no load', thread: 'main', load: false },
  { id: 'B', label: 'main thread, load on main', thread: 'main', load: true },
  { id: 'C', label: 'worker, no load', thread: 'worker', load: false },
  { id: 'D', label: 'worker, load on main', thread: 'worker', load: true },
];

interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of sorted values: the smallest value with at least p% at or below it. */
function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? Number.NaN;
}

function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

const ms = (value: number): string => (Number.isNaN(value) ? '—' : value.toFixed(2));

/** Mean and max of per-block CPU use by other processes, e.g. `0.12 (max 0.40)`; `n/a` off Linux. */
function cores(perBlock: readonly number[]): string {
  if (perBlock.length === 0) return 'n/a';
  const mean = perBlock.reduce((a, b) => a + b, 0) / perBlock.length;
  if (perBlock.length === 1) return mean.toFixed(2);
  return `${mean.toFixed(2)} (max ${Math.max(...perBlock).toFixed(2)})`;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  // First column left-aligned (labels), the rest right-aligned (numbers).
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

interface Results {
  options: Options;
  startedAt: Date;
  loadAtStart: number[];
  simulatorUrl: string;
  samples: Map<Scenario['id'], PingSample[]>;
  load: MainThreadLoad;
  cronMain: CronFire[];
  cronWorker: CronFire[];
  /** Cores' worth of CPU other processes used during each block of a scenario. */
  othersPerBlock: Map<Scenario['id'], number[]>;
  othersDuringCron: number | null;
}

/** The printed result: environment, the ping table, the overlap split, the cron table. */
function report(r: Results): string {
  const overhead = (s: PingSample): number => s.durationMs - (s.serverTimingMs ?? 0);
  const summaryCells = (values: number[]): string[] => {
    const s = summarize(values);
    return [String(s.n), ms(s.p50), ms(s.p90), ms(s.p99), ms(s.max)];
  };
  const pingRows: string[][] = [];
  const splitRows: string[][] = [];
  const p99 = new Map<Scenario['id'], number>();
  let d: Summary | undefined;
  for (const scenario of SCENARIOS) {
    const all = r.samples.get(scenario.id) ?? [];
    const ok = all.filter((s) => s.statusCode === 200 && s.serverTimingMs !== null);
    const summary = summarize(ok.map(overhead));
    p99.set(scenario.id, summary.p99);
    if (scenario.id === 'D') d = summary;
    pingRows.push([
      `${scenario.id}  ${scenario.label}`,
      ...summaryCells(ok.map(overhead)),
      String(ok.filter((s) => s.newConnection).length),
      String(all.length - ok.length),
      cores(r.othersPerBlock.get(scenario.id) ?? []),
    ]);
    if (scenario.load) {
      const hit = ok.filter((s) => r.load.overlaps(s.windowStart, s.windowEnd));
      const clear = ok.filter((s) => !r.load.overlaps(s.windowStart, s.windowEnd));
      splitRows.push([`${scenario.id}  overlapped a stretch`, ...summaryCells(hit.map(overhead))]);
      splitRows.push([`${scenario.id}  did not`, ...summaryCells(clear.map(overhead))]);
    }
  }
  const ratio = (a: Scenario['id'], b: Scenario['id']): string =>
    ((p99.get(a) ?? Number.NaN) / (p99.get(b) ?? Number.NaN)).toFixed(1);
  const verdict = (value: number, target: number): string =>
    `${value <= target ? 'met' : 'MISSED'} (${ms(value)})`;
  const cronRow = (label: string, fires: CronFire[]): string[] => {
    const s = summarize(fires.map((f) => f.latenessMs));
    const hit = fires.filter((f) => r.load.overlaps(f.scheduledAt, f.scheduledAt + 0.001));
    // Whole milliseconds: node-cron and Date.now() work at that resolution.
    const whole = (v: number): string => (Number.isNaN(v) ? '—' : v.toFixed(0));
    return [label, String(s.n), whole(s.p50), whole(s.p99), whole(s.max), String(hit.length)];
  };
  const loadAtEnd = loadavg();
  const cpu = cpus();
  const averages = (l: number[]): string => l.map((x) => x.toFixed(2)).join(' ');
  const { options, load } = r;
  return [
    `isa-monitor measurement benchmark, ${r.startedAt.toISOString()}`,
    `node ${process.version}, ${cpu.length} CPUs (${cpu[0]?.model.trim() ?? 'unknown'}), ` +
      `load average ${averages(r.loadAtStart)} at start, ${averages(loadAtEnd)} at end`,
    `simulator ${r.simulatorUrl} (child process) holds each ping ` +
      `${options.serverMs[0]}–${options.serverMs[1]} ms; ${options.samples} pings per scenario ` +
      `in blocks of ${BLOCK_SIZE} (+${WARMUP_PINGS} warm-up pings), ` +
      `${PROBE_GAP_MS.min}–${PROBE_GAP_MS.max} ms between pings`,
    `load: ${load.kind} ${LOAD.minSpinMs}–${LOAD.maxSpinMs} ms, every ` +
      `${LOAD.minGapMs}–${LOAD.maxGapMs} ms; ${load.stretches.length} stretches, main thread ` +
      `busy ${((100 * load.busyMs) / load.loadedMs).toFixed(0)}% of the loaded time`,
    '',
    'Ping: measured durationMs − Server-Timing sim;dur (ms)',
    table(
      ['scenario', 'n', 'p50', 'p90', 'p99', 'max', 'new conns', 'errors', 'others (cores)'],
      pingRows,
    ),
    '',
    `p99 ratio  B/A ${ratio('B', 'A')}x   D/C ${ratio('D', 'C')}x`,
    d === undefined
      ? ''
      : `target for D: p50 ≤ ${TARGET.p50} ms ${verdict(d.p50, TARGET.p50)}, ` +
        `p99 ≤ ${TARGET.p99} ms ${verdict(d.p99, TARGET.p99)}`,
    '',
    'Loaded scenarios split by whether a main-thread stretch overlapped the ping (ms)',
    table(['pings', 'n', 'p50', 'p90', 'p99', 'max'], splitRows),
    '',
    "node-cron '* * * * * *': fire time − scheduled second (ms), load on main; " +
      `other processes used ${cores(r.othersDuringCron === null ? [] : [r.othersDuringCron])} cores`,
    table(
      ['task on', 'fires', 'p50', 'p99', 'max', 'due in a stretch'],
      [cronRow('main thread', r.cronMain), cronRow('worker', r.cronWorker)],
    ),
  ].join('\n');
}

const progress = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (options === null) {
    console.log(USAGE);
    return;
  }
  const loadAtStart = loadavg();
  const startedAt = new Date();
  const simulator = await startSimulatorProcess();
  const cleanup: (() => Promise<void>)[] = [() => simulator.stop()];
  const onSignal = (): void => {
    void Promise.allSettled(cleanup.map((c) => c())).then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    await addServerLatency(simulator.url, options.serverMs);
    const mainClient = new ApiClient({
      baseUrl: simulator.url,
      apiKey: API_KEY,
      userAgent: BENCH_USER_AGENT,
    });
    cleanup.unshift(() => mainClient.close());
    const worker = new ProbeWorker({ baseUrl: simulator.url, apiKey: API_KEY });
    cleanup.unshift(() => worker.close());
    const load = new MainThreadLoad(options.load);
    const machine = new OtherProcessesCpu(simulator.pid);
    const othersPerBlock = new Map<Scenario['id'], number[]>(SCENARIOS.map((s) => [s.id, []]));

    const samples = new Map<Scenario['id'], PingSample[]>(SCENARIOS.map((s) => [s.id, []]));
    const rounds = Math.ceil(options.samples / BLOCK_SIZE);
    for (let round = 0; round < rounds; round++) {
      // Rotate the order each round so no scenario always follows the same one.
      const order = SCENARIOS.map((_, i) => SCENARIOS[(i + round) % SCENARIOS.length]!);
      progress(`round ${round + 1}/${rounds}: ${order.map((s) => s.id).join(' ')}`);
      for (const scenario of order) {
        const collected = samples.get(scenario.id)!;
        const count = Math.min(BLOCK_SIZE, options.samples - collected.length);
        if (count <= 0) continue;
        const before = machine.snapshot();
        if (scenario.load) load.start();
        try {
          if (scenario.thread === 'main') {
            await probeSeries(mainClient, count, WARMUP_PINGS, (s) => collected.push(s));
          } else {
            collected.push(...(await worker.probe(count, WARMUP_PINGS)));
          }
        } finally {
          load.stop();
        }
        const others = machine.othersCores(before, machine.snapshot());
        if (others !== null) othersPerBlock.get(scenario.id)?.push(others);
      }
    }

    progress(`node-cron: ${options.cronFires} firings on each thread, load on main`);
    const cronBefore = machine.snapshot();
    load.start();
    let cronMain: CronFire[];
    let cronWorker: CronFire[];
    try {
      [cronMain, cronWorker] = await Promise.all([
        (async () => {
          const fires: CronFire[] = [];
          await cronLateness(options.cronFires, (fire) => fires.push(fire));
          return fires;
        })(),
        worker.cron(options.cronFires),
      ]);
    } finally {
      load.stop();
    }

    console.log(
      report({
        options,
        startedAt,
        loadAtStart,
        simulatorUrl: simulator.url,
        samples,
        load,
        cronMain,
        cronWorker,
        othersPerBlock,
        othersDuringCron: machine.othersCores(cronBefore, machine.snapshot()),
      }),
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // Every step runs even if one fails, so the simulator process is always stopped.
    for (const step of cleanup) {
      await step().catch((err: unknown) => console.error('cleanup failed:', err));
    }
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
