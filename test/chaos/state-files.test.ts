/**
 * What the daemon finds in its state directory, as a real process (docs/configuration.md, "The
 * uptime record" and "The session ledger"):
 * - a FIFO at the uptime record's path once hung the start (nothing listened, SIGTERM ignored
 *   until SIGKILL); now it starts, says why the record starts empty, and stops within 15 s;
 * - an unwritable state directory once logged a warning with a stack after every run; now one
 *   line says so while runs go on.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { uptimeStorePath } from '../../src/server/uptime-store.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { eventually, metricSum, startDaemonProcess, type DaemonProcess } from '../support/cli.js';
import { writeDaemonConfig } from '../support/daemon-config.js';

const KEY = 'state-files-key-9f8e7d6c5b4a';
const ENV = { ISA_PRODUCTION_API_KEY: KEY };
let sim: RunningSimulator;
const running: DaemonProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [KEY], qualifyDelayMs: 100 });
});
afterAll(async () => {
  await sim.close();
});
afterEach(() => {
  for (const d of running.splice(0)) d.child.kill('SIGKILL');
});

function start(path: string): DaemonProcess {
  const daemon = startDaemonProcess(['--config', path], ENV);
  running.push(daemon);
  return daemon;
}

/** Warning and error lines of the daemon's log. */
function warnings(daemon: DaemonProcess): string[] {
  return daemon
    .output()
    .split('\n')
    .filter((line) => /"level":(40|50)/.test(line));
}

describe('a FIFO at the uptime record path', () => {
  it('starts, says why the record starts empty, and ends within 15 s of SIGTERM', async () => {
    const config = await writeDaemonConfig(`${sim.url}/env/production`);
    await mkdir(dirname(config.stateFile), { recursive: true });
    execFileSync('mkfifo', [uptimeStorePath(config.stateFile)]);
    const daemon = start(config.path);
    const url = await Promise.race([
      daemon.url,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 15_000)),
    ]);
    const sent = performance.now();
    daemon.child.kill('SIGTERM');
    const exit = await Promise.race([
      daemon.exit,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000)),
    ]);
    expect(url).not.toBeNull();
    expect(exit).not.toBeNull();
    expect(performance.now() - sent).toBeLessThan(15_000);
    expect(exit?.code).toBe(0);
    expect(daemon.output()).toContain('is not a regular file');
    expect(daemon.output()).toContain('uptime record unreadable; starting a new one');
  }, 60_000);
});

describe('an unwritable state directory', () => {
  it('is one warning line a store while runs go on, not one per run', async () => {
    const config = await writeDaemonConfig(`${sim.url}/env/production`, {
      street1: '1 Instant Way',
    });
    // The state directory is a file: every write fails, even for root.
    await writeFile(dirname(config.stateFile), '');
    const daemon = start(config.path);
    const url = await daemon.url;
    await eventually(
      async () => (await metricSum(url, /^isa_ping_attempts_total\{/)) >= 8,
      20_000,
      'eight pings',
    );
    // The session ledger and the contract baselines (docs/drift.md) each say it once.
    expect(
      warnings(daemon)
        .map((line) => /"msg":"([^"]*)"/.exec(line)?.[1])
        .sort(),
    ).toEqual([
      'cannot write the session ledger; lifecycle runs are skipped until it can be written',
      'contract baselines not written',
    ]);
    daemon.child.kill('SIGTERM');
    await daemon.exit;
  }, 60_000);
});
