/**
 * Durations as the configuration writes them: `1500ms`, `2s`, `60s`, `5m`, `1h`, or a combination
 * of those units from largest to smallest (`1m30s`, `1h30m`), the form Prometheus users know.
 * Bare numbers are not durations: `60` could mean seconds or milliseconds, so a unit is required.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

// Each unit at most once, in decreasing order; `m(?!s)` keeps `5ms` from reading as `5m` + `s`.
const DURATION_PATTERN = /^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/;

/**
 * Parses a duration string into milliseconds, or returns null when the text is not a duration
 * (empty, no unit, decimals, negative, spaces, units out of order, or too large to be exact).
 */
export function parseDuration(text: string): number | null {
  if (text === '') return null;
  const match = DURATION_PATTERN.exec(text);
  if (!match) return null;
  const [, h, m, s, ms] = match;
  const total =
    Number(h ?? 0) * HOUR + Number(m ?? 0) * MINUTE + Number(s ?? 0) * SECOND + Number(ms ?? 0);
  return Number.isSafeInteger(total) ? total : null;
}

/**
 * Writes milliseconds in the largest unit that expresses them exactly (`90000` → `90s`,
 * `300000` → `5m`, `1500` → `1500ms`), for messages that quote a configured duration.
 */
export function formatDuration(ms: number): string {
  if (ms !== 0 && ms % HOUR === 0) return `${ms / HOUR}h`;
  if (ms !== 0 && ms % MINUTE === 0) return `${ms / MINUTE}m`;
  if (ms !== 0 && ms % SECOND === 0) return `${ms / SECOND}s`;
  return `${ms}ms`;
}
