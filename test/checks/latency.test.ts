import { describe, expect, it } from 'vitest';
import { classifyLatency } from '../../src/kernel/latency.js';

const thresholds = { expectedMs: 100, warningMs: 500, criticalMs: 1000 };

describe('classifyLatency', () => {
  it.each([
    [5, 'expected'],
    [100, 'expected'],
    [100.1, 'elevated'],
    [500, 'elevated'],
    [501, 'warning'],
    [1000, 'warning'],
    [1000.5, 'critical'],
    [30_000, 'critical'],
  ])('%f ms is %s', (ms, cls) => {
    expect(classifyLatency(ms, thresholds)).toBe(cls);
  });
});
