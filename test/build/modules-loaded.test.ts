/**
 * What the built daemon's main thread loads of Node itself, measuring on it (two environments:
 * `--measurement.thread=auto` measures inline). Two modules it must not hold, each measured in
 * bench/README.md ("Node 24: where the memory goes"):
 * - `node:http2`, which bundled undici loads for its constants (scripts/build-plugins.mjs,
 *   `undiciHttp2Lazy`): 10 MiB of RSS;
 * - Node's own copy of undici, which an ES import of `node:http` loads on Node 24
 *   (src/server/node-http.ts): 13 MiB. CI runs this file on Node 24 too, where it can fail.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const REPORT = fileURLToPath(new URL('../support/report-modules.mjs', import.meta.url));

/** The modules a daemon's main thread loaded from start to a graceful stop once it runs. */
async function modulesOfDaemon(): Promise<string[]> {
  statSync(CLI); // `npm run build` first (npm test does).
  const dir = mkdtempSync(join(tmpdir(), 'isa-modules-'));
  writeFileSync(join(dir, 'key'), 'a-key\n', { mode: 0o600 });
  const environment = (name: string) =>
    `  - name: ${name}\n    base_url: http://127.0.0.1:9/isa\n    api_key_file: ${join(dir, 'key')}\n` +
    '    ping: { interval: 24h }\n    lifecycle: { enabled: false }\n';
  writeFileSync(
    join(dir, 'config.yaml'),
    `listen: { host: 127.0.0.1, port: 0 }\nstate_file: ${join(dir, 'sessions.json')}\n` +
      `environments:\n${environment('sandbox')}${environment('production')}`,
  );
  const child = spawn(
    process.execPath,
    ['--import', REPORT, CLI, 'run', '--config', join(dir, 'config.yaml')],
    { env: { PATH: process.env['PATH'], NODE_ENV: 'production' } },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const started = stdout.includes('schedules started');
    stdout += chunk.toString();
    // Once: a second SIGTERM ends the process at once, past its exit handlers.
    if (!started && stdout.includes('schedules started')) child.kill('SIGTERM');
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise((resolve) => child.on('close', resolve));
  const line = stderr.split('\n').find((l) => l.startsWith('MODULES '));
  if (line === undefined) throw new Error(`no module list; output:\n${stdout}\n${stderr}`);
  expect(stdout).toContain('"measurementThread":"inline"');
  return JSON.parse(line.slice('MODULES '.length)) as string[];
}

describe("the daemon's main thread", () => {
  it('measures without loading node:http2 or Node’s own undici', async () => {
    const modules = await modulesOfDaemon();
    // It did load what it measures and serves with.
    expect(modules).toEqual(expect.arrayContaining(['NativeModule http', 'NativeModule tls']));
    expect(modules).not.toContain('NativeModule http2');
    expect(modules).not.toContain('NativeModule internal/deps/undici/undici');
  }, 60_000);
});
