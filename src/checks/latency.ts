/** The API's latency classes, and how a ping duration is classified against the thresholds. */

export const LATENCY_CLASSES = ['expected', 'elevated', 'warning', 'critical'] as const;
export type LatencyClass = (typeof LATENCY_CLASSES)[number];

export interface LatencyThresholds {
  expectedMs: number;
  warningMs: number;
  criticalMs: number;
}

/**
 * Classifies a ping duration against the API's guidance: `expected` up to the expected threshold,
 * `elevated` up to the warning threshold, `warning` up to the critical threshold, `critical` above.
 * Boundaries belong to the lower class, matching the histogram's `le` buckets.
 */
export function classifyLatency(durationMs: number, t: LatencyThresholds): LatencyClass {
  if (durationMs <= t.expectedMs) return 'expected';
  if (durationMs <= t.warningMs) return 'elevated';
  if (durationMs <= t.criticalMs) return 'warning';
  return 'critical';
}
