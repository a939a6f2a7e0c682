#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=1 --v8-pool-size=1 --expose-gc
/**
 * The interpreter line holds the process-wide memory settings. They apply wherever the
 * `isa-monitor` command runs (npm's bin link, the container image's entry point), not to a plain
 * `node dist/cli.js`; each was measured side by side (bench/LOG.md, "Memory (2 environments)").
 * - `--max-semi-space-size=1`: the main thread's young generation stays at 1 MiB semi-spaces. Its
 *   allocations are small and short-lived (a result per run, a scrape), and the default let it grow
 *   to 16 MiB during start-up, the daemon's peak RSS. V8 reads it when the isolate is created, so
 *   it cannot be set from in here. (The measurement worker has its own limit, `measurement/host.ts`.)
 * - `--v8-pool-size=1`: one V8 helper thread (background GC and compilation) instead of one per
 *   core; each had a malloc arena of its own.
 * - `--expose-gc`: the `gc` that `measurement/young-generation.ts` collects the young generation
 *   with before a run, when the checks run on this thread (`--measurement.thread`). Without it
 *   that module makes a second context for it, 2 MiB of RSS on Node 24.
 * - `MALLOC_ARENA_MAX=2`, `MALLOC_MMAP_THRESHOLD_=131072`: glibc's malloc keeps two arenas instead
 *   of one per thread (up to 8 per core), and takes blocks of 128 KiB and more straight from the
 *   kernel, so memory that start-up and compilation freed goes back instead of staying resident in
 *   some thread's arena. (64 KiB saved no more, and would have sent each 64 KiB socket read buffer
 *   through mmap and munmap.)
 * Linux before 5.1 reads only the first 127 bytes of the line: it must stay shorter (a test pins
 * it). `--no-short-builtin-calls` would save the main isolate another ~1 MiB but does not fit; the
 * worker gets it from `measurement/host.ts`.
 */
/**
 * The command-line entry: argv → command. The only module that touches process.exit and signals.
 */
// Before any command runs: V8's tiering and memory mode (the bundle evaluates only definitions
// ahead of them).
import './v8-tiering.js';
import './v8-memory.js';
import { EXIT, UsageError, type CliIO } from './cli/io.js';
import { MAIN_USAGE } from './cli/usage.js';
import { VERSION } from './version.js';

type Command = (args: string[], io: CliIO) => number | Promise<number>;

/**
 * Each command is loaded only when it runs: a daemon process holds no simulator, no one-shot check
 * code and nothing else it does not use (every loaded module costs resident memory for the life of
 * the process; bench/README.md has the figures).
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => (await import('./cli/run.js')).runCommand,
  check: async () => (await import('./cli/check.js')).checkCommand,
  simulate: async () => (await import('./cli/simulate.js')).simulateCommand,
  'validate-config': async () => (await import('./cli/validate-config.js')).validateConfigCommand,
  'validate-slo': async () => (await import('./cli/validate-slo.js')).validateSloCommand,
  report: async () => (await import('./cli/report.js')).reportCommand,
  drift: async () => (await import('./cli/drift.js')).driftCommand,
};

/** The backstop of a graceful stop; the graceful part normally ends far sooner. */
const HARD_EXIT_MS = 14_000;

// Installed before any command starts, so a SIGTERM during start-up (closing leftover sessions,
// say) is a graceful stop as soon as the command can act on it, never an abrupt kill.
const stopRequested = new Promise<string>((resolve) => {
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals === 1) {
      resolve(signal);
      // The promise of docs/cli.md: the process ends within 15 s of SIGTERM whatever is pending.
      // The ledger is written atomically, so what is still open is closed at the next start.
      setTimeout(() => {
        console.error(`${signal}: shutdown took too long; exiting`);
        endBySignal(signal);
      }, HARD_EXIT_MS).unref();
    } else {
      console.error(`${signal} again: exiting without finishing the shutdown`);
      endBySignal(signal);
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
});
const waitForStop = (): Promise<string> => stopRequested;

/**
 * Ends the process by `signal` itself, with its default action (status 143 for SIGTERM, 130 for
 * SIGINT). Not `process.exit`: that waits for the threads of Node's pool, and one stuck in a
 * file read (a FIFO opened by an older build, a hung mount) held the process after its
 * "shutdown took too long" line until a SIGKILL (docs/cli.md).
 */
function endBySignal(signal: NodeJS.Signals): void {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}

// SIGHUP asks `run` to reload its configuration; Node's default would end the process. Installed
// before the command starts, so a SIGHUP during start-up is remembered and served once the
// daemon runs, never a kill.
let reloadListener: (() => void) | null = null;
let reloadPending = false;
function listenForReload(): void {
  process.on('SIGHUP', () => {
    if (reloadListener) reloadListener();
    else reloadPending = true;
  });
}
const onReloadRequest = (listener: () => void): void => {
  reloadListener = listener;
  if (reloadPending) {
    reloadPending = false;
    listener();
  }
};

const io: CliIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  cwd: process.cwd(),
  isTTY: process.stdout.isTTY === true,
  errIsTTY: process.stderr.isTTY === true,
  waitForStop,
  onReloadRequest,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === '--version' || command === '-v') {
    io.out(VERSION);
    return EXIT.ok;
  }
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.out(MAIN_USAGE);
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  if (command === 'run') listenForReload();
  const load = COMMANDS[command];
  if (!load) {
    io.err(`isa-monitor: unknown command "${command}"\n\n${MAIN_USAGE}`);
    return EXIT.usage;
  }
  try {
    const handler = await load();
    return await handler(args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(
        `isa-monitor ${command}: ${err.message}\nRun "isa-monitor ${command} --help" for usage.`,
      );
      return EXIT.usage;
    }
    io.err(`isa-monitor ${command}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

// Wait for stdout to drain before exiting, so piped output is never cut short.
const code = await main(process.argv.slice(2));
process.stdout.write('', () => process.exit(code));
