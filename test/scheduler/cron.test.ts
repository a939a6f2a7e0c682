import { describe, expect, it } from 'vitest';
import cron, { validate } from 'node-cron';
import { cronForInterval } from '../../src/config/interval.js';
import { cronWithOffset } from '../../src/scheduler/cron.js';

const DAY_SECONDS = 86_400;

/** The seconds of the day at which node-cron fires an expression that runs every day. */
function firingSecondsOfDay(expression: string): number[] {
  const fields = cron.parse(expression);
  expect(fields.dayOfMonth).toHaveLength(31);
  expect(fields.month).toHaveLength(12);
  expect(fields.dayOfWeek).toHaveLength(7);
  return fields.hour
    .flatMap((h) => fields.minute.flatMap((m) => fields.second.map((s) => h * 3600 + m * 60 + s)))
    .sort((a, b) => a - b);
}

describe('cronWithOffset', () => {
  it.each([
    [1_000, 0, '* * * * * *'],
    [2_000, 1_000, '1-59/2 * * * * *'],
    [15_000, 0, '*/15 * * * * *'],
    [15_000, 7_400, '7-59/15 * * * * *'],
    [60_000, 17_000, '17 * * * * *'],
    [300_000, 83_000, '23 1-59/5 * * * *'],
    [300_000, 0, '0 */5 * * * *'],
    [3_600_000, 125_000, '5 2 * * * *'],
    [7_200_000, 3_725_000, '5 2 1-23/2 * * *'],
    [86_400_000, 3_600_000, '0 0 1 * * *'],
  ])('every %i ms with offset %i ms is "%s"', (interval, offset, expected) => {
    const cron = cronWithOffset(interval, offset);
    expect(cron).toBe(expected);
    expect(validate(cron ?? '')).toBe(true);
  });

  it.each([45_000, 7 * 60_000, 90_000, 1_500, 500, 5 * 3_600_000])(
    'refuses %i ms, which cron cannot fire evenly',
    (interval) => {
      expect(cronWithOffset(interval, 0)).toBeNull();
    },
  );

  it('takes the offset modulo the interval', () => {
    expect(cronWithOffset(60_000, 77_000)).toBe('17 * * * * *');
  });

  // The expressions the scheduler actually runs: for every interval cron can fire evenly and every
  // offset within it, node-cron fires exactly at offset + k·interval, all day long. Offsets are
  // every second below a minute, then every 7th and (from an hour) every 61st second: steps
  // coprime with 60 that still reach every second of the minute and every minute of the hour.
  it('fires exactly at offset + k·interval for every schedulable interval and offset', () => {
    let checked = 0;
    for (let seconds = 1; seconds <= DAY_SECONDS; seconds++) {
      if (cronForInterval(seconds * 1000) === null) continue;
      const stride = seconds >= 3600 ? 61 : seconds >= 60 ? 7 : 1;
      for (let offset = 0; offset < seconds; offset += stride) {
        const expression = cronWithOffset(seconds * 1000, offset * 1000 + 999);
        if (expression === null) throw new Error(`${seconds}s at ${offset}s: no expression`);
        const expected = Array.from(
          { length: DAY_SECONDS / seconds },
          (_, k) => offset + k * seconds,
        );
        const fired = firingSecondsOfDay(expression);
        if (fired.length !== expected.length || fired.some((t, i) => t !== expected[i])) {
          throw new Error(
            `every ${seconds}s at +${offset}s: "${expression}" fires at ${fired.slice(0, 5).join(', ')}…`,
          );
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(4_000);
  });
});
