import { describe, expect, it } from 'vitest';
import { rangeChunks, MAX_POINTS } from '../../src/report/prometheus.js';
import {
  counterSteps,
  histogramQuantile,
  maintenanceSpans,
  pingFigures,
  stepTimes,
  withoutMaintenance,
  type StepGroups,
  type StepPings,
} from '../../src/report/steps.js';
import { FAILED_PING_RESULTS } from '../../src/report/compute.js';

const step = (results: Record<string, number>): StepPings => new Map(Object.entries(results));
const times = (n: number) => stepTimes(0, n * 60, 60);

describe('incidents from the pings of each step', () => {
  it('runs from the first failed ping to the next successful one, cause the most frequent', () => {
    const steps = [
      step({ ok: 1 }),
      step({ server_error: 1 }),
      step({ timeout: 1 }),
      step({ timeout: 1 }),
      step({ ok: 1 }),
      step({ ok: 1 }),
    ];
    const f = pingFigures(steps, new Uint8Array(6), times(6), FAILED_PING_RESULTS);
    expect(f.incidents).toEqual([{ start: 60, end: 240, duration_seconds: 180, cause: 'timeout' }]);
    expect(f.pings).toBe(6);
    expect(f.failed_pings).toBe(3);
    expect(f.availability).toBeCloseTo(0.5, 10);
  });

  it('takes the first cause on a tie', () => {
    const steps = [step({ invalid_body: 1 }), step({ timeout: 1 }), step({ ok: 1 })];
    const f = pingFigures(steps, new Uint8Array(3), times(3), FAILED_PING_RESULTS);
    expect(f.incidents[0]?.cause).toBe('invalid_body');
  });

  it('counts 401 and 429 as pings but never as failures', () => {
    const steps = [step({ unauthorized: 1 }), step({ rate_limited: 1 }), step({ ok: 1 })];
    const f = pingFigures(steps, new Uint8Array(3), times(3), FAILED_PING_RESULTS);
    expect(f).toMatchObject({ pings: 3, failed_pings: 0, availability: 1, incidents: [] });
  });

  it('leaves maintenance out, and a window ends an incident at its start', () => {
    const steps = [
      step({ timeout: 1 }),
      step({ timeout: 1 }),
      step({ server_error: 1 }),
      step({ server_error: 1 }),
      step({ ok: 1 }),
    ];
    const maintenance = Uint8Array.from([0, 0, 1, 1, 0]);
    const f = pingFigures(steps, maintenance, times(5), FAILED_PING_RESULTS);
    expect(f.incidents).toEqual([{ start: 0, end: 120, duration_seconds: 120, cause: 'timeout' }]);
    expect(f).toMatchObject({ pings: 3, failed_pings: 2, maintenance_seconds: 120 });
  });

  it('keeps an incident open across steps without pings, and to the end of the range', () => {
    const steps = [step({ timeout: 1 }), step({}), step({ timeout: 1 })];
    const f = pingFigures(steps, new Uint8Array(3), times(3), FAILED_PING_RESULTS);
    expect(f.incidents).toEqual([{ start: 0, end: null, duration_seconds: 180, cause: 'timeout' }]);
  });

  it('treats a step with both a failed and a successful ping as the end of an incident', () => {
    const steps = [step({ timeout: 1 }), step({ timeout: 1, ok: 1 }), step({ ok: 1, timeout: 1 })];
    const f = pingFigures(steps, new Uint8Array(3), times(3), FAILED_PING_RESULTS);
    expect(f.incidents).toEqual([{ start: 0, end: 60, duration_seconds: 60, cause: 'timeout' }]);
    expect(f.failed_pings).toBe(3);
  });

  it('has no availability without pings', () => {
    expect(pingFigures([], new Uint8Array(0), [0], FAILED_PING_RESULTS).availability).toBeNull();
  });
});

describe('counter growth per step', () => {
  it('differences each series, counts a reset as growth, and skips gaps', () => {
    const t = stepTimes(0, 300, 60);
    const series = [
      {
        labels: { result: 'ok', instance: 'a' },
        points: [
          [0, 5],
          [60, 6],
          [120, 7],
          [180, 1],
          [300, 3],
        ] as Array<[number, number]>,
      },
      {
        labels: { result: 'ok', instance: 'b' },
        points: [
          [120, 10],
          [180, 11],
        ] as Array<[number, number]>,
      },
    ];
    const groups = counterSteps(series, t, ['result']);
    expect([...(groups.values().next().value?.deltas ?? [])]).toEqual([1, 1, 2, 0, 2]);
  });

  it('adds the end of the range as a last, shorter step', () => {
    expect(stepTimes(0, 150, 60)).toEqual([0, 60, 120, 150]);
    expect(stepTimes(0, 120, 60)).toEqual([0, 60, 120]);
  });
});

describe('chunks of a long range', () => {
  it('keeps every query at or under the points limit, without gaps or overlaps', () => {
    const start = 1_790_000_000;
    const end = start + 90 * 86400;
    const chunks = rangeChunks(start, end, 60);
    expect(chunks).toHaveLength(Math.ceil((90 * 1440 + 1) / MAX_POINTS));
    for (const [a, b] of chunks) expect((b - a) / 60 + 1).toBeLessThanOrEqual(MAX_POINTS);
    expect(chunks[0]?.[0]).toBe(start);
    expect(chunks[chunks.length - 1]?.[1]).toBe(end);
    for (let i = 1; i < chunks.length; i++)
      expect(chunks[i]?.[0]).toBe((chunks[i - 1]?.[1] ?? 0) + 60);
  });

  it('is one query for a short range', () => {
    expect(rangeChunks(0, 3600, 60)).toEqual([[0, 3600]]);
  });
});

describe('histogram quantiles', () => {
  const buckets = [
    { le: 0.1, count: 50 },
    { le: 0.5, count: 90 },
    { le: 1, count: 100 },
    { le: Infinity, count: 100 },
  ];
  it('interpolates within the bucket as PromQL does', () => {
    expect(histogramQuantile(0.5, buckets)).toBeCloseTo(0.1, 10);
    expect(histogramQuantile(0.25, buckets)).toBeCloseTo(0.05, 10);
    expect(histogramQuantile(0.95, buckets)).toBeCloseTo(0.75, 10);
  });
  it('gives the largest finite bound in +Inf, and null without observations', () => {
    expect(
      histogramQuantile(0.99, [
        { le: 1, count: 1 },
        { le: Infinity, count: 10 },
      ]),
    ).toBe(1);
    expect(histogramQuantile(0.5, [{ le: Infinity, count: 0 }])).toBeNull();
  });
});

describe('histograms and runs with the maintenance left out', () => {
  // Coarse steps of 3 fine steps: 0, 180, 360, 540; fine steps of 60 s.
  const coarseTimes = stepTimes(0, 540, 180);
  const fineTimes = stepTimes(0, 540, 60);
  const group = (deltas: number[]): StepGroups =>
    new Map([
      [
        '{"result":"success"}',
        { labels: { result: 'success' }, deltas: Float64Array.from(deltas) },
      ],
    ]);
  const mask = (...steps: number[]) => {
    const m = new Uint8Array(fineTimes.length - 1);
    for (const s of steps) m[s] = 1;
    return m;
  };

  it('finds the coarse intervals that hold a fine step in maintenance, consecutive ones merged', () => {
    expect(maintenanceSpans(coarseTimes, fineTimes, mask())).toEqual([]);
    expect(maintenanceSpans(coarseTimes, fineTimes, mask(2, 3))).toEqual([[0, 2]]);
    expect(maintenanceSpans(coarseTimes, fineTimes, mask(0, 8))).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });

  it('replaces an interval in maintenance by the growth of its fine steps outside it', () => {
    const coarse = group([3, 3, 3]);
    // Read again at the fine step over the first interval only: a run in each minute.
    const fine = group([1, 1, 1, 0, 0, 0, 0, 0, 0]);
    const out = withoutMaintenance(coarse, coarseTimes, fine, fineTimes, mask(1));
    expect([...(out.get('{"result":"success"}')?.deltas ?? [])]).toEqual([2, 3, 3]);
    // The coarse groups are not changed.
    expect([...(coarse.get('{"result":"success"}')?.deltas ?? [])]).toEqual([3, 3, 3]);
  });

  it('leaves everything as read without maintenance, and nothing of a group not read again', () => {
    const coarse = group([3, 3, 3]);
    expect(withoutMaintenance(coarse, coarseTimes, new Map(), fineTimes, mask())).toEqual(coarse);
    const out = withoutMaintenance(coarse, coarseTimes, new Map(), fineTimes, mask(4));
    expect([...(out.get('{"result":"success"}')?.deltas ?? [])]).toEqual([3, 0, 3]);
  });

  it('refuses coarse times that are not fine times', () => {
    expect(() => maintenanceSpans(stepTimes(0, 540, 200), fineTimes, mask())).toThrow(
      'not a fine time',
    );
  });
});
