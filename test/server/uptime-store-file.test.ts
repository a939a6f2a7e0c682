/**
 * What the uptime record finds at its path at start, and how its write failures are told
 * (docs/configuration.md, "The uptime record"): a FIFO, a device or a too-large file is refused
 * before it is read and kept aside, never deleted; failing writes are reported once, and their
 * recovery once.
 */
import { execFileSync } from 'node:child_process';
import {
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  rename,
  rm,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scheduledRun } from '../../bench/uptime-store.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { MAX_UPTIME_RECORD_BYTES, UptimeStore } from '../../src/server/uptime-store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'uptime-file-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const open = (path: string, extra: Partial<Parameters<typeof UptimeStore.open>[0]> = {}) =>
  UptimeStore.open({ path, checks: CHECK_LIST, flushIntervalMs: 0, ...extra });

describe('the file found at start', () => {
  it('refuses a FIFO at once, keeps it aside, and starts an empty record', async () => {
    const path = join(dir, 'sessions.uptime.json');
    execFileSync('mkfifo', [path]);
    const started = performance.now();
    const store = await open(path);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(store.recovered).toBe(
      `${path} is not a regular file (a FIFO, a device, a directory); kept as ${path}.not-a-file`,
    );
    expect(await readdir(dir)).toContain('sessions.uptime.json.not-a-file');
    store.record(scheduledRun('ping', 'production', Date.now(), 10, null));
    await store.close();
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ version: 1 });
  });

  it('refuses a symbolic link to /dev/zero without reading it', async () => {
    const path = join(dir, 'sessions.uptime.json');
    await symlink('/dev/zero', path);
    const before = process.memoryUsage().rss;
    const store = await open(path);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
    expect(store.recovered).toContain('is not a regular file');
    await store.close();
  });

  it('refuses a record over the cap, keeps it as .too-large, and goes on recording', async () => {
    const path = join(dir, 'sessions.uptime.json');
    await writeFile(path, '');
    await truncate(path, MAX_UPTIME_RECORD_BYTES + 1);
    const store = await open(path);
    expect(store.recovered).toBe(
      `${path} is larger than ${MAX_UPTIME_RECORD_BYTES} bytes; kept as ${path}.too-large`,
    );
    expect(await readdir(dir)).toContain('sessions.uptime.json.too-large');
    store.record(scheduledRun('ping', 'production', Date.now(), 10, null));
    await store.close();
    expect(store.days('production', 'ping', 1)[0]?.runs).toBe(1);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ version: 1 });
  });
});

describe('a state directory that cannot be written', () => {
  it('reports the failure once over many writes, and the recovery once', async () => {
    const state = join(dir, 'state');
    const path = join(state, 'sessions.uptime.json');
    const told: string[] = [];
    const store = await open(path, {
      onWriteError: () => told.push('failing'),
      onWriteRecovered: () => told.push('recovered'),
    });
    // The directory is a file: every write fails, even for root.
    await writeFile(state, '');
    for (let i = 0; i < 5; i++) {
      store.record(scheduledRun('ping', 'production', Date.now(), 10, null));
      await store.flush().catch(() => undefined);
    }
    expect(told).toEqual(['failing']);
    await rename(state, `${state}.file`);
    await mkdir(state);
    await store.flush();
    store.record(scheduledRun('ping', 'production', Date.now(), 10, null));
    await store.flush();
    expect(told).toEqual(['failing', 'recovered']);
    await store.close();
  });
});
