/** The API's latency classes, and how a ping duration is classified against the thresholds. */

export const LATENCY_CLASSES = ['expected', 'elevated', 'warning', 'critical'] as const;
export type LatencyClass = (typeof LATENCY_CLASSES)[number];

/**
 * The configured threshold levels, exported as `isa_latency_threshold_seconds{level}`; each has
 * its exact bound in the ping histogram (`metrics/registry.ts`, `bucketsOf`).
 */
export const THRESHOLD_LEVELS = ['expected', 'warning', 'critical'] as const;
export type ThresholdLevel = (typeof THRESHOLD_LEVELS)[number];

/** A threshold per level, ms. */
export type LatencyThresholds = Record<`${ThresholdLevel}Ms`, number>;

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
