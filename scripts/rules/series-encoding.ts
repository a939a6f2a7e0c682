/**
 * From the text a scrape reads to promtool's input series: parsing the Prometheus text exposition,
 * naming a series the way Prometheus prints it, and writing values in promtool's expanding notation.
 */

/** One sample of an exposition: its name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * One input series: its name, label set and one value per scrape. `null`: no sample, and a
 * staleness marker after a present one, as a failed scrape or a vanished target writes it;
 * `undefined`: nothing arrived, not even the marker, as from an agent cut off from the store.
 */
export interface Series {
  metric: string;
  labels: Record<string, string>;
  values: Array<number | null | undefined>;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

/** Parses the Prometheus text format (version 0.0.4) as prom-client writes it. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    samples.push(parseSampleLine(line));
  }
  return samples;
}

function parseSampleLine(line: string): Sample {
  const m = SAMPLE_LINE.exec(line);
  if (!m) throw new Error(`not an exposition sample line: ${line}`);
  const labels: Record<string, string> = {};
  const body = m[2] ?? '';
  LABEL_PAIR.lastIndex = 0;
  let consumed = 0;
  for (let pair = LABEL_PAIR.exec(body); pair; pair = LABEL_PAIR.exec(body)) {
    labels[pair[1] ?? ''] = unescapeLabel(pair[2] ?? '');
    consumed = LABEL_PAIR.lastIndex;
  }
  if (consumed !== body.length) throw new Error(`bad labels in exposition line: ${line}`);
  return { name: m[1] ?? '', labels, value: parseSampleValue(m[3] ?? '') };
}

/** Which series a sample belongs to: its name and labels. */
export type SeriesIdentity = Omit<Sample, 'value'>;

/**
 * A reader for many renderings of the same registry. A sample line's series part is parsed once
 * and remembered, so a scenario of thousands of scrapes only reads what changes (the values), and
 * a series is always the same `SeriesIdentity` object. `keep` picks the sample names to return.
 */
export function expositionReader(
  keep: (name: string) => boolean,
): (text: string) => Array<{ series: SeriesIdentity; value: number }> {
  const known = new Map<string, SeriesIdentity | null>();
  return (text) => {
    const samples: Array<{ series: SeriesIdentity; value: number }> = [];
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const space = line.lastIndexOf(' ');
      const head = line.slice(0, space);
      let series = known.get(head);
      if (series === undefined) {
        const { name, labels } = parseSampleLine(line);
        series = keep(name) ? { name, labels } : null;
        known.set(head, series);
      }
      if (series) samples.push({ series, value: parseSampleValue(line.slice(space + 1)) });
    }
    return samples;
  };
}

function unescapeLabel(text: string): string {
  return text.replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
}

function parseSampleValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  const value = Number(text);
  if (Number.isNaN(value) && text !== 'NaN') throw new Error(`bad sample value ${text}`);
  return value;
}

/**
 * A bucket bound the way the scraping Prometheus stores it: as written (`1`), or normalised the
 * way Prometheus 3 does (`1.0`).
 */
export function normaliseLe(le: string, style: 'prometheus2' | 'prometheus3'): string {
  if (style === 'prometheus2' || le === '+Inf') return le;
  const bound = Number(le);
  return Number.isInteger(bound) ? `${bound}.0` : le;
}

/** `metric{a="1",b="2"}` with label names sorted, as Prometheus prints series. */
export function seriesSelector(metric: string, labels: Readonly<Record<string, string>>): string {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`);
  return `${metric}{${parts.join(',')}}`;
}

function formatNumber(n: number): string {
  return String(Number(n.toFixed(6)));
}

/**
 * Writes values in promtool's expanding notation: `a+bxn` (n+1 values from a in steps of b),
 * `axn` (a, n+1 times), `_` / `_xn` (n missing samples) and `stale` (the first missing sample
 * after a present one, as a failed scrape writes it; none where it is `undefined`: nothing came).
 */
export function expandingNotation(values: ReadonlyArray<number | null | undefined>): string {
  const out: string[] = [];
  let i = 0;
  while (i < values.length) {
    const v = values[i];
    if (v === null || v === undefined) {
      let j = i;
      const previous = i > 0 ? values[i - 1] : null;
      if (v === null && previous !== null && previous !== undefined) {
        out.push('stale');
        j++;
      }
      let missing = 0;
      while (j < values.length && (values[j] === null || values[j] === undefined)) {
        missing++;
        j++;
      }
      if (missing === 1) out.push('_');
      else if (missing > 1) out.push(`_x${missing}`);
      i = j;
      continue;
    }
    const next = values[i + 1];
    if (next === null || next === undefined) {
      out.push(formatNumber(v));
      i++;
      continue;
    }
    const j = progressionEnd(values, i);
    // A two-value progression that cuts into a longer one (0 1 1 1 1) reads better as `0 1x3`.
    if (j === i + 1 && progressionEnd(values, i + 1) > i + 2) {
      out.push(formatNumber(v));
      i++;
      continue;
    }
    const step = next - v;
    const n = j - i;
    const stepText = formatNumber(Math.abs(step));
    if (Number(stepText) === 0) out.push(`${formatNumber(v)}x${n}`);
    else out.push(`${formatNumber(v)}${step < 0 ? '-' : '+'}${stepText}x${n}`);
    i = j + 1;
  }
  return out.join(' ');
}

/** The last index of the arithmetic progression of present values starting at `i`. */
function progressionEnd(values: ReadonlyArray<number | null | undefined>, i: number): number {
  const first = values[i];
  const second = values[i + 1];
  if (first === null || first === undefined || second === null || second === undefined) return i;
  const step = second - first;
  let j = i + 1;
  while (j + 1 < values.length) {
    const a = values[j];
    const b = values[j + 1];
    if (a === null || a === undefined || b === null || b === undefined) break;
    if (Math.abs(b - a - step) > 1e-9) break;
    j++;
  }
  return j;
}
