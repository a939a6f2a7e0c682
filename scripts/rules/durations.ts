/**
 * Prometheus durations (`1m30s`, `10m`, `3d`, `500ms`) as whole milliseconds, the resolution
 * Prometheus and promtool accept.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  y: 365 * 24 * 3600 * 1000,
  w: 7 * 24 * 3600 * 1000,
  d: 24 * 3600 * 1000,
  h: 3600 * 1000,
  m: 60 * 1000,
  s: 1000,
  ms: 1,
};

/** A whole Prometheus duration: one or more `<integer><unit>` parts, largest unit first. */
export const DURATION_PATTERN = /(?:\d+(?:ms|y|w|d|h|m|s))+/;
const WHOLE = new RegExp(`^${DURATION_PATTERN.source}$`);
const PART = /(\d+)(ms|y|w|d|h|m|s)/g;

/** Parses a Prometheus duration such as `1h30m` or `250ms` into milliseconds; throws otherwise. */
export function parseDuration(text: string): number {
  if (!WHOLE.test(text)) throw new Error(`not a Prometheus duration: ${JSON.stringify(text)}`);
  let ms = 0;
  for (const [, amount, unit] of text.matchAll(PART)) {
    ms += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
  }
  return ms;
}

/**
 * Formats whole milliseconds as a Prometheus duration, largest units first (`600000` → `10m`,
 * `2235000` → `37m15s`, `85714` → `1m25s714ms`); `0` → `0s`. Weeks and years are never used:
 * `7d` reads better than `1w`.
 */
export function formatDuration(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0) throw new Error(`not a whole, non-negative ms count: ${ms}`);
  if (ms === 0) return '0s';
  let rest = ms;
  let text = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const size = UNIT_MS[unit] ?? 1;
    const amount = Math.floor(rest / size);
    if (amount > 0) text += `${amount}${unit}`;
    rest -= amount * size;
  }
  return text;
}
