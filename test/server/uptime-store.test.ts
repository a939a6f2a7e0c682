/**
 * The uptime record on a fake clock: day boundaries, restarts, maintenance, incidents, ageing out,
 * a corrupt file, and its size after 90 simulated days (docs/configuration.md, "The uptime record").
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scheduledRun, simulatedSize } from '../../bench/uptime-store.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import type { CheckResult } from '../../src/kernel/check.js';
import {
  MAX_INCIDENTS,
  UptimeStore,
  quantile,
  uptimeStorePath,
} from '../../src/server/uptime-store.js';

const MIN = 60_000;
const T0 = Date.parse('2026-03-01T23:55:00Z');

let dir: string;
let path: string;
let now: number;
let maintenance: boolean;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'isa-uptime-'));
  path = join(dir, 'sessions.uptime.json');
  now = T0;
  maintenance = false;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const open = () =>
  UptimeStore.open({
    path,
    checks: CHECK_LIST,
    now: () => now,
    flushIntervalMs: 0,
    inMaintenance: () => maintenance,
  });

function run(
  check: string,
  t: number,
  reason: string | null = null,
  durationMs = 50,
  environment = 'production',
): CheckResult {
  return scheduledRun(check, environment, t, durationMs, reason);
}

/** Pings every minute from `from` for `n` minutes; `reasons(i)` fails some. */
function pings(store: UptimeStore, from: number, n: number, reasons: (i: number) => string | null) {
  for (let i = 0; i < n; i++) {
    now = from + i * MIN;
    store.record(run('ping', now, reasons(i)));
  }
}

describe('the uptime record', () => {
  it('lives beside the session ledger, named after it', () => {
    expect(uptimeStorePath('/var/lib/isa/sessions.json')).toBe('/var/lib/isa/sessions.uptime.json');
    expect(uptimeStorePath('/var/lib/isa/ledger')).toBe('/var/lib/isa/ledger.uptime.json');
  });

  it('splits runs at the UTC day boundary and keeps them across a restart', async () => {
    const store = await open();
    // 23:55 to 00:04: 5 pings on 1 March (one fails), 5 on 2 March (two fail).
    pings(store, T0, 10, (i) => (i === 1 || i === 6 || i === 7 ? 'timeout' : null));
    const before = store.days('production', 'ping', 2);
    expect(before.map((d) => [d.date, d.runs, d.failed])).toEqual([
      ['2026-03-01', 5, 1],
      ['2026-03-02', 5, 2],
    ]);
    expect(before[0]?.availability).toBeCloseTo(0.8);
    await store.close();

    const again = await open();
    expect(again.days('production', 'ping', 2)).toEqual(before);
    expect(again.window('production', 'ping', '24h')).toMatchObject({ runs: 10, failed: 3 });
    // A day later the 24 h window has moved on; the 7 days still count them.
    now += 24 * 60 * MIN;
    expect(again.window('production', 'ping', '24h').runs).toBe(0);
    expect(again.window('production', 'ping', '7d')).toMatchObject({ runs: 10, failed: 3 });
    expect(again.days('production', 'ping', 3).map((d) => d.runs)).toEqual([5, 5, 0]);
    await again.close();
  });

  it('counts 401 and 429 as runs, not as the API failing, and other checks by their outcome', async () => {
    const store = await open();
    pings(store, T0 + 10 * MIN, 4, (i) =>
      i === 0 ? 'unauthorized' : i === 1 ? 'rate_limited' : null,
    );
    store.record(run('lifecycle', now, 'qualify_timeout'));
    expect(store.window('production', 'ping', '24h')).toMatchObject({ runs: 4, failed: 0 });
    expect(store.window('production', 'lifecycle', '24h')).toMatchObject({ runs: 1, failed: 1 });
    expect(store.incidents('production', 90)).toEqual([]);
    expect(store.last('production')?.state).toBe('up');
  });

  it('keeps runs inside maintenance windows apart from availability', async () => {
    const store = await open();
    maintenance = true;
    pings(store, T0 + 10 * MIN, 3, () => 'server_error');
    maintenance = false;
    pings(store, now + MIN, 2, () => null);
    expect(store.window('production', 'ping', '24h')).toEqual({
      runs: 2,
      failed: 0,
      maintenance_runs: 3,
      availability: 1,
    });
    // The incident is recorded, marked as begun in maintenance.
    expect(store.incidents('production', 1)).toMatchObject([
      { cause: 'server_error', failed: 3, maintenance: true },
    ]);
  });

  it('records an incident from the first failed ping to the next successful one, across a restart', async () => {
    const store = await open();
    pings(store, T0, 3, () => null);
    const started = now + MIN;
    pings(store, started, 3, (i) => (i === 0 ? 'timeout' : 'server_error'));
    // A rejected key in the middle neither ends it nor counts as a failure.
    store.record(run('ping', (now += MIN), 'unauthorized'));
    expect(store.incidents('production', 1)).toMatchObject([
      { start: started, end: null, cause: 'timeout', failed: 3 },
    ]);
    await store.close();
    const again = await open();
    const ended = now + MIN;
    pings(again, ended, 2, () => null);
    // It began on 1 March, before midnight: the last two days hold it.
    expect(again.incidents('production', 1)).toEqual([]);
    expect(again.incidents('production', 2)).toEqual([
      {
        check: 'ping',
        cause: 'timeout',
        start: started,
        end: ended,
        failed: 3,
        maintenance: false,
      },
    ]);
    expect(again.last('production')).toEqual({ t: now, state: 'up' });
  });

  it('ages days and incidents out after 90 days, removed environments too', async () => {
    const store = await open();
    pings(store, T0, 2, (i) => (i === 0 ? 'timeout' : null));
    store.record(run('ping', now, null, 50, 'old-environment'));
    now = T0 + 89 * 24 * 60 * MIN;
    store.record(run('ping', now, null));
    expect(store.days('production', 'ping', 90)[0]).toMatchObject({ date: '2026-03-01', runs: 2 });
    expect(store.environmentNames()).toContain('old-environment');
    now += 24 * 60 * MIN;
    store.record(run('ping', now, null));
    expect(store.days('production', 'ping', 90)[0]).toMatchObject({ runs: 0 });
    expect(store.incidents('production', 90)).toEqual([]);
    expect(store.environmentNames()).toEqual(['production']);
    await store.close();
    const file = JSON.parse(await readFile(path, 'utf8')) as { environments: object };
    expect(Object.keys(file.environments)).toEqual(['production']);
  });

  it('keeps at most the newest incidents when the API flaps', async () => {
    const store = await open();
    pings(store, T0, 2 * MAX_INCIDENTS + 10, (i) => (i % 2 === 0 ? 'server_error' : null));
    const incidents = store.incidents('production', 90);
    expect(incidents).toHaveLength(MAX_INCIDENTS);
    expect(incidents[0]?.start).toBe(T0 + (2 * MAX_INCIDENTS + 8) * MIN);
  });

  it("estimates a day's p50 and p95 from its histogram within 9 %", async () => {
    const store = await open();
    now = T0 + 10 * MIN;
    for (let i = 0; i < 100; i++) store.record(run('ping', now, null, i < 95 ? 40 : 900));
    const [day] = store.days('production', 'ping', 1);
    expect(Math.abs((day?.p50_ms ?? 0) / 40 - 1)).toBeLessThan(0.09);
    expect(Math.abs((day?.p95_ms ?? 0) / 40 - 1)).toBeLessThan(0.09);
    expect(quantile([], 0.5)).toBeNull();
    // Buckets in order, counts summed: 3 runs in bucket 20, 1 in 30.
    expect(quantile([20, 3, 30, 1], 0.5)).toBe(quantile([20, 1], 0.5));
  });

  it('sets a corrupt file aside and starts afresh; removes temporary files of dead writers', async () => {
    await writeFile(path, '{"version":1,"environments":');
    // A pid that cannot exist: a writer killed during its write.
    await writeFile(`${path}.999999999.3.tmp`, '{');
    const store = await open();
    expect(store.recovered).toContain('not an uptime record');
    expect(store.environmentNames()).toEqual([]);
    const names = await readdir(dir);
    expect(names).toContain('sessions.uptime.json.corrupt');
    expect(names.some((n) => n.endsWith('.tmp'))).toBe(false);
    pings(store, T0, 1, () => null);
    await store.close();
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ version: 1 });
  });

  it('writes nothing when nothing changed', async () => {
    const store = await open();
    await store.close();
    await expect(readdir(dir)).resolves.toEqual([]);
  });

  it('stays under 2 MiB for two environments after 90 days at the defaults', async () => {
    const sim = {
      environments: ['production', 'sandbox'],
      days: 90,
      now: Date.parse('2026-11-27T12:00:00Z'),
    };
    const steady = await simulatedSize(join(dir, 'steady.json'), sim);
    const flapping = await simulatedSize(join(dir, 'flapping.json'), { ...sim, mode: 'flapping' });
    console.log(
      `uptime record, 2 environments × 90 days at the defaults: ${steady} bytes; ` +
        `flapping at every ping all quarter: ${flapping} bytes`,
    );
    expect(steady).toBeLessThan(2 * 1024 * 1024);
    expect(flapping).toBeLessThan(2 * 1024 * 1024);
  }, 60_000);
});
