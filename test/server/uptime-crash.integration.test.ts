/**
 * kill -9 during a write of the uptime record: a child process rewrites a 90-day record in a loop
 * and is killed at random moments; every time the file still parses and holds every minute the
 * child reported written, so at most the last minute is lost (docs/configuration.md, "The uptime
 * record").
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatedSize } from '../../bench/uptime-store.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { UptimeStore } from '../../src/server/uptime-store.js';

const NOW = Date.parse('2026-11-27T00:00:00Z');
const KILLS = 5;

let dir: string;
let path: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'isa-uptime-crash-'));
  path = join(dir, 'sessions.uptime.json');
  // A full-size record, so each write takes long enough to be caught in the middle.
  await simulatedSize(path, { environments: ['production', 'sandbox'], days: 90, now: NOW });
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Pings of production's record on disk (the file parsed as the daemon parses it). */
async function pingsOnDisk(at: number): Promise<number> {
  const store = await UptimeStore.open({
    path,
    checks: CHECK_LIST,
    now: () => at,
    flushIntervalMs: 0,
  });
  expect(store.recovered).toBeNull();
  return store.window('production', 'ping', '90d').runs;
}

/** Runs the writer from `start` until it reported `writes` writes, plus a random moment; SIGKILL. */
async function writeAndKill(
  start: number,
  writes: number,
): Promise<{ total: number; now: number }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/support/uptime-writer.ts', path, String(start)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let last = { total: -1, now: start };
  let seen = 0;
  let buffered = '';
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_c, s) => resolve(s)),
  );
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        last = JSON.parse(line) as typeof last;
        seen += 1;
        if (seen === writes) {
          // Somewhere inside one of the next writes.
          setTimeout(() => resolve(), Math.random() * 40);
        }
      }
    });
  });
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  // Lines that arrived between the decision and the kill.
  for (const line of buffered.split('\n').filter(Boolean)) last = JSON.parse(line) as typeof last;
  return last;
}

describe('the uptime record under kill -9', () => {
  it('parses after every kill and loses at most the last minute', async () => {
    let start = NOW;
    for (let kill = 0; kill < KILLS; kill++) {
      const reported = await writeAndKill(start, 5 + kill);
      const onDisk = await pingsOnDisk(reported.now + 60_000);
      // Every write the child reported is on disk; at most the minute it was writing is not.
      expect(onDisk).toBeGreaterThanOrEqual(reported.total);
      expect(onDisk).toBeLessThanOrEqual(reported.total + 60);
      const text = await readFile(path, 'utf8');
      expect(() => JSON.parse(text) as unknown).not.toThrow();
      start = reported.now + 60_000;
    }
    // The killed writers' temporary files are gone once the record is opened again.
    await pingsOnDisk(start);
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  }, 120_000);
});
