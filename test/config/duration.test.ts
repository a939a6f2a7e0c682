import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/config/duration.js';

describe('parseDuration', () => {
  it.each([
    ['0ms', 0],
    ['1500ms', 1500],
    ['2s', 2_000],
    ['60s', 60_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['24h', 86_400_000],
    ['1m30s', 90_000],
    ['1h30m', 5_400_000],
    ['1h2m3s4ms', 3_723_004],
    ['5m0s', 300_000],
  ])('reads %j as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    [''],
    ['60'],
    ['1.5s'],
    ['-1s'],
    ['+1s'],
    ['5 m'],
    [' 5m'],
    ['5M'],
    ['5sec'],
    ['1d'],
    ['30s1m'],
    ['1s1s'],
    ['ms'],
    ['99999999999999999999h'],
  ])('rejects %j', (text) => {
    expect(parseDuration(text)).toBeNull();
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [1500, '1500ms'],
    [1000, '1s'],
    [90_000, '90s'],
    [120_000, '2m'],
    [3_600_000, '1h'],
    [5_400_000, '90m'],
  ])('writes %d ms as %j', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('writes text that parses back to the same milliseconds', () => {
    for (const ms of [1, 999, 1000, 59_000, 61_000, 3_599_000, 7_200_000]) {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    }
  });
});
