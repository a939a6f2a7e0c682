import { describe, expect, it } from 'vitest';
import { validate } from 'node-cron';
import { cronWithOffset } from '../../src/scheduler/cron.js';

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
});
