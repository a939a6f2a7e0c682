/**
 * The main thread's side of the measurement engine: starts it in a worker thread or inline, and
 * delivers its events. Which one is docs/architecture.md's "Two threads, or one": a worker keeps a
 * busy main thread out of the latencies (bench/measurement.ts), and costs 20 MiB of RSS on Node 24.
 */
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { MonitorConfig } from '../config/index.js';
import type {
  MeasurementCommand,
  MeasurementEvent,
  MeasurementInit,
  ReloadReport,
} from './messages.js';
import type { AnyCheck } from '../kernel/check.js';

export interface MeasurementHost {
  /** Applies a reloaded configuration's environments (see `MeasurementEngine.reload`). */
  reload(config: MonitorConfig): Promise<ReloadReport>;
  /** Stops scheduling, lets runs finish (bounded), closes sessions; resolves when all is done. */
  stop(graceMs: number): Promise<void>;
}

export type MeasurementMode = 'worker' | 'inline';

/** `--measurement.thread`: a mode, or `auto` to choose by the number of environments. */
export const MEASUREMENT_THREADS = ['auto', 'inline', 'worker'] as const satisfies readonly (
  MeasurementMode | 'auto'
)[];

export type MeasurementThread = (typeof MEASUREMENT_THREADS)[number];

/**
 * Up to this many environments, `auto` measures on the main thread. What can stall that thread
 * is mostly a `/metrics` render, which grows with the environments: about 0.14 ms each
 * (bench/LOG.md, "Target 5"), so a few milliseconds here, within the measurement's own
 * p99, against 170 ms at 1000 environments, where the worker's 20 MiB buys the accuracy
 * (docs/architecture.md, "Two threads, or one").
 */
export const INLINE_UP_TO_ENVIRONMENTS = 10;

/** The mode `thread` asks for, at start, with this many environments. */
export function measurementMode(thread: MeasurementThread, environments: number): MeasurementMode {
  if (thread !== 'auto') return thread;
  return environments <= INLINE_UP_TO_ENVIRONMENTS ? 'inline' : 'worker';
}

/**
 * The worker's young generation. The measurement thread allocates little and briefly (a result per
 * run), and V8's default lets the young generation grow to 48 MiB; at 2 MiB it stays small, and
 * the daemon's steady RSS went from ~100 to ~87 MiB (bench/LOG.md, "Memory").
 */
export const WORKER_YOUNG_GENERATION_MB = 2;

/**
 * The measurement worker's V8 flags, set just before its isolate is created. They are
 * process-wide, but the main thread's isolate exists by then and compiles no WebAssembly, so they
 * are the worker's however the process was started (the `isa-monitor` command's interpreter line,
 * `node dist/cli.js`, a test).
 * - `--expose-gc`: the worker's own context gets `gc`, which `young-generation.ts` calls; without
 *   it that module makes a second context for it.
 * - `--no-short-builtin-calls`: V8 would otherwise copy its builtins' code next to the isolate's
 *   own code (a call saves a jump), 1.6 MiB mapped and ~1 MiB resident per isolate, measured;
 *   builtins then run from the node binary's shared pages (bench/LOG.md, "Memory", session 2).
 * - `--liftoff-only`: undici parses HTTP with llhttp, a WebAssembly module compiled at the first
 *   request. V8 compiled it with Liftoff and then again with TurboFan in the background, which
 *   took some 30 MiB for a moment, the daemon's peak RSS (bench/LOG.md, "Memory"); Liftoff's
 *   code parses a ping's few hundred bytes just as well. Read when a module is compiled.
 */
export const WORKER_V8_FLAGS = [
  '--expose-gc',
  '--no-short-builtin-calls',
  '--liftoff-only',
] as const;

/**
 * `--liftoff-only` for an isolate that already runs: V8 works out what a flag implies when an
 * isolate is made, so on the main thread the flags it implies are set too. Without them, undici's
 * parser was compiled again by TurboFan at the first request, 22 MiB for a moment and 5 MiB for
 * good on Node 24 (bench/README.md, "Node 24: where the memory goes").
 */
export const INLINE_V8_FLAGS = [
  '--liftoff-only',
  '--no-wasm-tier-up',
  '--no-wasm-dynamic-tiering',
] as const;

/**
 * Where the engine runs. A worker's entry (`worker.ts`, or a test's own to exercise failures)
 * imports the checks itself, since functions cannot cross to it; inline, the caller hands them.
 */
export type MeasurementStart =
  { mode: 'worker'; entry?: URL | undefined } | { mode: 'inline'; checks: readonly AnyCheck[] };

/** Starts the engine; `onEvent` receives every event on the calling thread. */
export async function startMeasurement(
  init: MeasurementInit,
  onEvent: (event: MeasurementEvent) => void,
  how: MeasurementStart = { mode: 'worker' },
): Promise<MeasurementHost> {
  if (how.mode === 'inline') {
    for (const flag of INLINE_V8_FLAGS) setFlagsFromString(flag);
    // Loaded only inline: in worker mode the main thread holds no API client, scheduler or checks.
    const { startEngine } = await import('./engine.js');
    const engine = await startEngine(init, onEvent, { checks: how.checks });
    return {
      reload(config) {
        const report = engine.reload(config);
        onEvent({ type: 'reloaded', report });
        return Promise.resolve(report);
      },
      async stop(graceMs) {
        await engine.stop(graceMs);
        onEvent({ type: 'stopped' });
      },
    };
  }
  return startWorker(init, onEvent, how.entry ?? workerEntry());
}

function startWorker(
  init: MeasurementInit,
  onEvent: (event: MeasurementEvent) => void,
  entry: URL,
): Promise<MeasurementHost> {
  for (const flag of WORKER_V8_FLAGS) setFlagsFromString(flag);
  const worker = new Worker(entry, {
    workerData: init,
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  });
  let stopped: (() => void) | undefined;
  const whenStopped = new Promise<void>((resolve) => {
    stopped = resolve;
  });

  /** Reloads sent and not yet answered, in order: the worker answers them in order. */
  const reloads: Array<(report: ReloadReport) => void> = [];
  return new Promise<MeasurementHost>((resolve, reject) => {
    let ready = false;
    worker.on('message', (event: MeasurementEvent) => {
      onEvent(event);
      if (event.type === 'reloaded') {
        reloads.shift()?.(event.report);
      } else if (event.type === 'ready' && !ready) {
        ready = true;
        resolve(host);
      } else if (event.type === 'fatal' && !ready) {
        reject(new Error(event.message));
      } else if (event.type === 'stopped') {
        stopped?.();
      }
    });
    worker.on('error', (err) => {
      if (!ready) reject(err);
      else onEvent({ type: 'fatal', message: err.message });
    });
    let stopping = false;
    worker.on('exit', (code) => {
      if (!stopping && ready)
        onEvent({ type: 'fatal', message: `measurement worker exited (code ${code})` });
      if (!ready) reject(new Error(`measurement worker exited during start-up (code ${code})`));
      stopped?.();
    });

    const host: MeasurementHost = {
      reload(config) {
        return new Promise<ReloadReport>((answered) => {
          reloads.push(answered);
          const command: MeasurementCommand = { type: 'reload', config };
          worker.postMessage(command);
        });
      },
      async stop(graceMs) {
        stopping = true;
        const command: MeasurementCommand = { type: 'stop', graceMs };
        worker.postMessage(command);
        await whenStopped;
        await worker.terminate();
      },
    };
  });
}

/**
 * The worker's entry module. From dist/ it is `worker.js`, the worker's own bundle beside the
 * bundled `cli.js` (scripts/build.mjs). When running from the TypeScript
 * sources (tests through tsx), loader hooks registered by `--import tsx` do not reach a worker on
 * Node 20, so a tiny bootstrap registers tsx inside the worker before importing `worker.ts`.
 */
function workerEntry(): URL {
  if (!import.meta.url.endsWith('.ts')) return new URL('./worker.js', import.meta.url);
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./worker.ts', import.meta.url).href;
  const bootstrap = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(entry)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`);
}
