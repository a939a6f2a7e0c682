/**
 * kill -9 during a write of the uptime record: a child process rewrites a 90-day record in a loop
 * and is killed while a write is in progress (its temporary file exists, docs/configuration.md,
 * "The uptime record"); the temporary file left behind shows the kill cut that write short. Every
 * time the file still parses and holds every minute the child reported written, so at most the
 * last minute is lost.
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
/** Kills that must land inside a write; a kill the write outran (renamed first) is retried. */
const KILLS = 5;
const MAX_ATTEMPTS = 20;

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

/** The writers' temporary files beside the record: a write in progress, or one a kill cut short. */
async function temporaryFiles(): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith('.tmp'));
}

/** Resolves once a write has begun: its temporary file exists. */
async function writeInProgress(): Promise<void> {
  const deadline = performance.now() + 30_000;
  while ((await temporaryFiles()).length === 0) {
    if (performance.now() > deadline) throw new Error('the writer began no write');
  }
}

/**
 * Runs the writer from `start` until it reported `writes` writes and the next one has begun, then
 * SIGKILLs it. `interrupted`: its temporary file is still there, so the kill came before the
 * write's rename.
 */
async function writeAndKill(
  start: number,
  writes: number,
): Promise<{ total: number; now: number; interrupted: boolean }> {
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
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        last = JSON.parse(line) as typeof last;
        seen += 1;
        if (seen === writes) writeInProgress().then(resolve, reject);
      }
    });
  });
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  const interrupted = (await temporaryFiles()).length > 0;
  // Lines that arrived between the decision and the kill.
  for (const line of buffered.split('\n').filter(Boolean)) last = JSON.parse(line) as typeof last;
  return { ...last, interrupted };
}

describe('the uptime record under kill -9', () => {
  it('parses after every kill and loses at most the last minute', async () => {
    let start = NOW;
    let interrupted = 0;
    let kill = 0;
    for (; interrupted < KILLS; kill++) {
      expect(kill, `${interrupted} of ${kill} kills landed inside a write`).toBeLessThan(
        MAX_ATTEMPTS,
      );
      const reported = await writeAndKill(start, 5 + (kill % KILLS));
      if (reported.interrupted) interrupted += 1;
      const onDisk = await pingsOnDisk(reported.now + 60_000);
      // Every write the child reported is on disk; at most the minute it was writing is not.
      expect(onDisk).toBeGreaterThanOrEqual(reported.total);
      expect(onDisk).toBeLessThanOrEqual(reported.total + 60);
      const text = await readFile(path, 'utf8');
      expect(() => JSON.parse(text) as unknown).not.toThrow();
      start = reported.now + 60_000;
    }
    console.log(`uptime record: ${interrupted} of ${kill} kills landed inside a write`);
    // The killed writers' temporary files are gone once the record is opened again.
    await pingsOnDisk(start);
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  }, 120_000);
});
