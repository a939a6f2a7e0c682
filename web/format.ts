/** Numbers and times as an SRE reads them. */

/** `42 ms`, `1.25 s`. */
export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  if (value < 1000) return `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;
  return `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)} s`;
}

/** `12 s ago`, `5 min ago`, `3 h ago`. */
export function ago(t: number, now: number): string {
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

/** Local wall time, `14:03:21`. */
export function clock(t: number): string {
  return new Date(t).toLocaleTimeString([], { hour12: false });
}

/** `every 15 s`, `every 5 min`. */
export function every(intervalMs: number): string {
  const s = intervalMs / 1000;
  return s < 120 ? `every ${s} s` : `every ${Math.round(s / 60)} min`;
}

/** `24 h`, `90 min`. */
export function span(windowMs: number): string {
  const min = windowMs / 60_000;
  return min >= 120 ? `${Math.round(min / 60)} h` : `${Math.round(min)} min`;
}

/** A snake_case key as words: `qualify_status` → `qualify status`; `connect_ms` → `connect`. */
export function words(key: string): string {
  return key.replace(/_ms$/, '').replace(/_/g, ' ');
}

/** The median of a list (null when empty). */
export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] ?? null)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** `99.93 %`: truncated, never rounded up to a better figure (as the badges); `–` without runs. */
export function percent(availability: number | null): string {
  if (availability === null) return '–';
  if (availability >= 1) return '100 %';
  return `${(Math.floor(availability * 10_000) / 100).toFixed(2)} %`;
}

/** `45 s`, `12 min`, `3.5 h`, `2.1 d`. */
export function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} d`;
}
