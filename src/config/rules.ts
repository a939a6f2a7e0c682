/**
 * The building blocks of the configuration schema that the environment schema and every check's
 * config section share: duration keys, and rules that span keys. A leaf module (no import of the
 * schema or of any check), so check sections can be built from it without an import cycle.
 */
import { z } from 'zod';
import { formatDuration, parseDuration } from './duration.js';
import { describeValue } from './problems.js';
import type { Loose } from '../kernel/section.js';

export type { Loose } from '../kernel/section.js';

export type Issues = {
  addIssue: (issue: { code: 'custom'; message: string; path?: PropertyKey[] }) => void;
};

const DURATION_HINT = 'must be a duration such as "1500ms", "60s", "5m" or "1h"';

/** Cross-key rules run whenever the mapping itself is a mapping, whatever its keys' problems. */
export const WHEN_MAPPING = { when: (payload: z.core.ParsePayload) => isRecord(payload.value) };

/** A duration string → milliseconds, with an optional extra rule on the result. */
export function duration(rule?: (ms: number, text: string) => string | undefined) {
  return z
    .string({ error: (issue) => `${DURATION_HINT} (got ${describeValue(issue.input)})` })
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      const problem =
        ms === null ? `${DURATION_HINT} (got ${describeValue(text)})` : rule?.(ms, text);
      if (ms === null || problem !== undefined) {
        ctx.addIssue({ code: 'custom', message: problem ?? DURATION_HINT });
        return z.NEVER;
      }
      return ms;
    });
}

/**
 * The longest wait a Node timer holds (2^31 − 1 ms, about 24.8 days): `setTimeout` given more
 * fires after 1 ms instead, so a duration that becomes a timer (an interval, a timeout, a grace)
 * is refused above it (docs/configuration.md, "Value types").
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

const TIMER_LIMIT = `must be at most 596h31m23s647ms, the longest a timer can wait`;

export const positiveDuration = () =>
  duration((ms, text) => {
    if (ms <= 0) return 'must be greater than 0';
    return ms > MAX_TIMER_MS ? `${TIMER_LIMIT} (got ${describeValue(text)})` : undefined;
  });

/** The longest interval: a day (a check run less often than that watches nothing). */
export const MAX_INTERVAL_MS = 24 * 60 * 60_000;

/**
 * A check's interval: any duration from 1 s to 24 h (45 s, 90 s, 7 min alike; the scheduler's
 * tickers take any period, `scheduler/interval-ticker.ts`).
 */
export const intervalDuration = () =>
  duration((ms, text) => {
    if (ms < 1000) return `must be at least 1s (got ${describeValue(text)})`;
    return ms > MAX_INTERVAL_MS ? `must be at most 24h (got ${describeValue(text)})` : undefined;
  });

/** The interval of a timer-driven loop (the control probe): any duration of at least 1 s. */
export const timerInterval = () =>
  duration((ms, text) => {
    if (ms < 1000) return `must be at least 1s (got ${describeValue(text)})`;
    return ms > MAX_TIMER_MS ? `${TIMER_LIMIT} (got ${describeValue(text)})` : undefined;
  });

/** A rule between two duration keys of one mapping, reported on `key` when `holds` is false. */
type DurationOrder = (
  v: Loose,
  issues: Issues,
  key: string,
  other: string,
  section: string,
) => void;

function durationOrder(
  holds: (ms: number, other: number) => boolean,
  phrase: string,
): DurationOrder {
  return (v, issues, key, other, section) => {
    const ms = v[key];
    const bound = v[other];
    // Only when both parsed: a key that failed has its own problem already.
    if (!isMs(ms) || !isMs(bound) || holds(ms, bound)) return;
    issues.addIssue({
      code: 'custom',
      path: [key],
      message: `${phrase} ${section}.${other} (${formatDuration(bound)}), got ${formatDuration(ms)}`,
    });
  };
}

export const shorterThan = durationOrder((ms, limit) => ms < limit, 'must be shorter than');
export const notLongerThan = durationOrder((ms, limit) => ms <= limit, 'must not be longer than');
export const greaterThan = durationOrder((ms, floor) => ms > floor, 'must be greater than');
export const notShorterThan = durationOrder((ms, floor) => ms >= floor, 'must not be shorter than');

/** A parsed duration: a failed one is still the original string (or another non-number). */
export function isMs(value: unknown): value is number {
  return typeof value === 'number';
}

export function asLoose(value: unknown): Loose {
  return isRecord(value) ? value : {};
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
