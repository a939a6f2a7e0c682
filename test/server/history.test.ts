/**
 * The status page's history: rings sized by window and interval, the last runs in full, the
 * incremental `after` query and the time window.
 */
import { describe, expect, it } from 'vitest';
import { CHECK_LIST, CHECK_NAMES } from '../../src/checks/index.js';
import { RunHistory, sampleCapacity } from '../../src/server/history.js';
import { lifecycleResult, pingResult } from '../metrics/fixtures.js';

const HOUR = 3_600_000;
const T = { expectedMs: 100, warningMs: 500, criticalMs: 1000 };

function history(now: () => number, runs = 3, windowMs = HOUR) {
  return new RunHistory({
    checks: CHECK_LIST,
    windowMs,
    runs,
    now,
    environments: [
      {
        name: 'production',
        thresholds: T,
        checks: [
          { name: 'ping', enabled: true, intervalMs: 60_000 },
          { name: 'lifecycle', enabled: false, intervalMs: 300_000 },
        ],
      },
    ],
  });
}

describe('RunHistory', () => {
  it('keeps window / interval samples and the last N runs in full, oldest first', () => {
    let now = 0;
    const h = history(() => now);
    for (let i = 0; i < 100; i++) {
      now = i * 60_000;
      h.add(pingResult(i % 10 === 0 ? 'timeout' : 'ok', { startedAt: now }));
    }
    const ping = h.document().environments['production']?.checks['ping'];
    expect(ping?.capacity).toEqual({ samples: 60, runs: 3 });
    expect(ping?.samples).toHaveLength(60);
    expect(ping?.samples.map((s) => s.seq)).toEqual(Array.from({ length: 60 }, (_, i) => 41 + i));
    expect(ping?.runs.map((r) => r.seq)).toEqual([98, 99, 100]);
    expect(ping?.runs[2]?.steps[0]?.name).toBe('ping');
    expect(ping?.samples.at(-1)).toMatchObject({
      outcome: 'pass',
      duration_ms: 43,
      summary: { latency_class: 'expected' },
    });
    expect(ping?.samples.at(-10)).toMatchObject({ outcome: 'fail', reason: 'timeout' });
  });

  it('keeps nothing of a disabled check but still lists it', () => {
    const h = history(() => 0);
    h.add(lifecycleResult('success', { startedAt: 0 }));
    const lifecycle = h.document().environments['production']?.checks['lifecycle'];
    expect(lifecycle).toMatchObject({ enabled: false, samples: [], runs: [] });
  });

  it('answers only what came after a sequence number, and at most `limit` of it', () => {
    const h = history(() => 10 * 60_000);
    for (let i = 0; i < 5; i++) h.add(pingResult('ok', { startedAt: i * 60_000 }));
    const doc = h.document({ after: 3 });
    expect(doc.seq).toBe(5);
    expect(doc.environments['production']?.checks['ping']?.samples.map((s) => s.seq)).toEqual([
      4, 5,
    ]);
    const limited = h.document({ limit: 1 }).environments['production']?.checks['ping'];
    expect(limited?.samples.map((s) => s.seq)).toEqual([5]);
    expect(limited?.runs.map((r) => r.seq)).toEqual([5]);
  });

  it('drops samples older than the window even when the ring is not full', () => {
    let now = 0;
    const h = history(() => now);
    h.add(pingResult('ok', { startedAt: 0 }));
    h.add(pingResult('ok', { startedAt: HOUR }));
    now = HOUR + 1;
    expect(h.document().environments['production']?.checks['ping']?.samples).toHaveLength(1);
  });

  it('filters by environment and check, and lists the registry with each check’s page view', () => {
    const h = history(() => 0);
    h.setSessionsOpen('production', 2);
    const doc = h.document({ check: 'ping' });
    expect(Object.keys(doc.environments['production']?.checks ?? {})).toEqual(['ping']);
    expect(doc.environments['production']?.sessions_open).toBe(2);
    expect(doc.environments['production']?.thresholds_ms).toEqual({
      expected: 100,
      warning: 500,
      critical: 1000,
    });
    expect(doc.checks.map((c) => c.name)).toEqual(['ping']);
    expect(h.document().checks.map((c) => c.name)).toEqual(CHECK_NAMES);
    expect(h.document({ environment: 'sandbox' }).environments).toEqual({});
  });

  it('sizes 24 h of 60 s pings as 1440 samples', () => {
    expect(sampleCapacity(24 * HOUR, 60_000)).toBe(1440);
    expect(sampleCapacity(24 * HOUR, 300_000)).toBe(288);
    expect(sampleCapacity(1000, 60_000)).toBe(1);
  });
});
