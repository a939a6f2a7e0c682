import cron from 'node-cron';
import { describe, expect, it } from 'vitest';
import { cronForInterval } from '../../src/config/interval.js';

const DAY_SECONDS = 86_400;

describe('cronForInterval', () => {
  it.each([
    [1_000, '* * * * * *'],
    [2_000, '*/2 * * * * *'],
    [15_000, '*/15 * * * * *'],
    [30_000, '*/30 * * * * *'],
    [60_000, '0 * * * * *'],
    [120_000, '0 */2 * * * *'],
    [300_000, '0 */5 * * * *'],
    [1_800_000, '0 */30 * * * *'],
    [3_600_000, '0 0 * * * *'],
    [7_200_000, '0 0 */2 * * *'],
    [28_800_000, '0 0 */8 * * *'],
    [43_200_000, '0 0 */12 * * *'],
    [86_400_000, '0 0 0 * * *'],
  ])('fires every %d ms with %j', (ms, expression) => {
    expect(cronForInterval(ms)).toBe(expression);
    expect(cron.validate(expression)).toBe(true);
  });

  it.each([
    [0, 'zero'],
    [-1_000, 'negative'],
    [500, 'under a second'],
    [1_500, 'not whole seconds'],
    [45_000, 'step 45 restarts every minute'],
    [90_000, 'over a minute, not whole minutes'],
    [420_000, '7 minutes does not divide the hour'],
    [2_700_000, '45 minutes'],
    [5_400_000, '90 minutes'],
    [18_000_000, '5 hours does not divide the day'],
    [172_800_000, 'longer than a day'],
    [Number.NaN, 'not a number'],
    [1_000.5, 'fraction of a millisecond'],
  ])('returns null for %d (%s)', (ms) => {
    expect(cronForInterval(ms)).toBeNull();
  });

  // The oracle: an interval is schedulable exactly when its firing times within a day, starting at
  // midnight, form a product of hour × minute × second sets (what a cron expression can describe)
  // and the last gap of the day equals the others. Checked against every whole second of a day.
  it('agrees with a brute-force oracle for every whole-second interval up to a day', () => {
    const schedulable: number[] = [];
    const disagreements: string[] = [];
    for (let seconds = 1; seconds <= DAY_SECONDS; seconds++) {
      const expression = cronForInterval(seconds * 1000);
      if ((expression !== null) !== isProductSchedule(seconds)) {
        disagreements.push(`${seconds}s → ${expression}`);
      }
      if (expression !== null) schedulable.push(seconds);
    }
    expect(disagreements).toEqual([]);
    // 1-30 s dividing 60 (11), 1 m, 2-30 m dividing 60 (10), 1 h, 2-12 h dividing 24 (6), 24 h.
    expect(schedulable).toHaveLength(30);
  });

  // The expression itself, as node-cron reads it, fires exactly every interval all day long.
  it('returns expressions that node-cron fires evenly all day', () => {
    for (let seconds = 1; seconds <= DAY_SECONDS; seconds++) {
      const expression = cronForInterval(seconds * 1000);
      if (expression === null) continue;
      const fields = cron.parse(expression);
      expect(fields.dayOfMonth).toHaveLength(31);
      expect(fields.month).toHaveLength(12);
      expect(fields.dayOfWeek).toHaveLength(7);
      const times = fields.hour
        .flatMap((h) =>
          fields.minute.flatMap((m) => fields.second.map((s) => h * 3600 + m * 60 + s)),
        )
        .sort((a, b) => a - b);
      const gaps = times.map((t, i) => (times[i + 1] ?? (times[0] ?? 0) + DAY_SECONDS) - t);
      expect(new Set(gaps), expression).toEqual(new Set([seconds]));
    }
  });

  // Why 45 s is refused: node-cron's own next-run list for the naive step expression is uneven.
  it('refuses 45s because node-cron would fire at :00 and :45 of each minute', async () => {
    const task = cron.createTask('*/45 * * * * *', () => undefined);
    try {
      const runs = task.getNextRuns(4).map((d) => d.getTime());
      const gaps = runs.slice(1).map((t, i) => (t - (runs[i] ?? 0)) / 1000);
      expect(new Set(gaps)).toEqual(new Set([45, 15]));
    } finally {
      await task.destroy();
    }
    expect(cronForInterval(45_000)).toBeNull();
  });
});

function isProductSchedule(seconds: number): boolean {
  if (DAY_SECONDS % seconds !== 0) return false;
  const hours = new Set<number>();
  const minutes = new Set<number>();
  const secs = new Set<number>();
  let count = 0;
  for (let t = 0; t < DAY_SECONDS; t += seconds) {
    hours.add(Math.floor(t / 3600));
    minutes.add(Math.floor(t / 60) % 60);
    secs.add(t % 60);
    count++;
  }
  return hours.size * minutes.size * secs.size === count;
}
