/**
 * Runs the real command line (`src/cli.ts` through tsx) as a child process, the way users run it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE_CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const BUILT_CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/**
 * The build when it is newer than every source file (as after `npm test`'s build step: fast and
 * the shipped artefact), else the sources through tsx (a developer running vitest directly).
 */
const CLI_ARGS: string[] = builtIsFresh() ? [BUILT_CLI] : ['--import', 'tsx', SOURCE_CLI];

function builtIsFresh(): boolean {
  try {
    const built = statSync(BUILT_CLI).mtimeMs;
    const newest = (dir: string): number =>
      readdirSync(dir, { withFileTypes: true }).reduce((max, entry) => {
        const path = join(dir, entry.name);
        return Math.max(max, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
      }, 0);
    return built >= newest(join(ROOT, 'src'));
  } catch {
    return false;
  }
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `isa-monitor ...args` to completion. */
export function runCli(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; uid?: number } = {},
): Promise<CliRun> {
  const child = spawnCli(args, opts.env, opts.uid);
  return collect(child, opts.timeoutMs ?? 60_000);
}

/** Starts `isa-monitor ...args` and leaves it running. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}, uid?: number): ChildProcess {
  return spawn(process.execPath, [...CLI_ARGS, ...args], {
    cwd: ROOT,
    ...(uid === undefined ? {} : { uid, gid: uid }),
    // A clean environment: no ISA_* variable of the developer's leaks into a test.
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export function collect(child: ChildProcess, timeoutMs: number): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `command did not finish in ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        ),
      );
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      // Let the pipes drain.
      setImmediate(() => resolve({ code, signal, stdout, stderr }));
    });
  });
}

/** A running daemon child process with its output so far. */
export interface DaemonProcess {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the metrics server URL once the daemon logged it. */
  url: Promise<string>;
  exit: Promise<CliRun>;
}

export function startDaemonProcess(args: string[], env: NodeJS.ProcessEnv = {}): DaemonProcess {
  const child = spawnCli(['run', ...args], env);
  let output = '';
  let resolveUrl: (url: string) => void = () => {};
  const url = new Promise<string>((resolve) => (resolveUrl = resolve));
  const scan = (d: Buffer): void => {
    output += d.toString();
    const match = /"url":"(https?:\/\/[^"]+)","msg":"serving/.exec(output);
    if (match?.[1]) resolveUrl(match[1]);
  };
  child.stdout?.on('data', scan);
  child.stderr?.on('data', scan);
  const exit = new Promise<CliRun>((resolve) =>
    child.once('exit', (code, signal) =>
      setImmediate(() => resolve({ code, signal, stdout: output, stderr: '' })),
    ),
  );
  return { child, output: () => output, url, exit };
}

/** The sum of the daemon's samples at `url` whose line matches `pattern`. */
export async function metricSum(url: string, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => pattern.test(line))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/** Polls `probe` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (performance.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts `isa-monitor simulate ...args` and waits for the base URL it prints first; `stop` ends
 * it with SIGTERM and waits for it to exit.
 */
export async function startSimulatorProcess(
  args: string[],
): Promise<{ url: string; stop: () => Promise<CliRun> }> {
  const child = spawnCli(['simulate', '--port', '0', ...args]);
  const exit = collect(child, 120_000);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve(line);
    });
    child.once('exit', () => reject(new Error(`simulate exited early: ${out}`)));
  });
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      return exit;
    },
  };
}
