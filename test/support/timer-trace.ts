/**
 * Node's own timer trace (`NODE_DEBUG=timer`) of an ES module script run in a new Node process
 * (with tsx, so it can import the sources). The trace names every timer list the process handles
 * ("timeout callback 300"): a wake-up of the thread, which a test can look for or rule out.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

/** `import … from ${source('../src/x.ts', import.meta.url)}` in a script: a source's path. */
export function source(path: string, from: string): string {
  return JSON.stringify(fileURLToPath(new URL(path, from)));
}

/** Runs `script` to its end (it must exit 0) and returns the trace. */
export function timerTrace(script: string): string {
  const child = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    { env: { ...process.env, NODE_DEBUG: 'timer' }, encoding: 'utf8' },
  );
  expect(child.status, child.stderr).toBe(0);
  return child.stderr;
}
