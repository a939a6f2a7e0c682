/**
 * Rewrites a copy of the alert rules for a compressed (or stretched) clock: every range window
 * `[10m]`, subquery `[1h:1m]`, `offset`, `for:`, `keep_firing_for:` and group `interval:` is
 * multiplied by one factor, and so is every numeric literal that the rules mark as a time with a
 * trailing `# seconds:` comment (the expected-count denominators). Counts and ratios stay as they
 * are, so with the daemon's intervals scaled by the same factor every alert fires after the same
 * number of pings, only sooner: factor 1/30 turns `[10m]` into `[20s]` for 2-second pings.
 *
 * Prometheus durations are whole milliseconds: scaled durations are rounded to the nearest one
 * (never below 1 ms), and the marked literals to the same millisecond, so a window and its
 * denominator stay equal. Thresholds that are times in the real rules are written relative to
 * the ping interval (`5 * isa_ping_interval_seconds`) and need no scaling.
 *
 * Usage: `npx tsx scripts/rules/scale-rules.ts --factor 1/30 [--in FILE] [--out FILE]`
 * (defaults: alerts/isa-monitor.rules.yaml, standard output).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import YAML from 'yaml';
import { DURATION_PATTERN, formatDuration, parseDuration } from './durations.js';

const DURATION = DURATION_PATTERN.source;
const RANGE = new RegExp(`\\[(\\s*)(${DURATION})(\\s*)(?::(\\s*)(${DURATION})?(\\s*))?\\]`, 'g');
const OFFSET = new RegExp(`\\b(offset\\s+-?\\s*)(${DURATION})`, 'g');
/** A comment that marks the numeric literal before it, on the same line, as seconds. */
const SECONDS_MARKER = /^#\s*seconds\b/;
const TRAILING_NUMBER = /(^|[^\w.])(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(\s*)$/;

/** Multiplies a Prometheus duration by `factor`, rounded to whole ms and at least 1 ms if non-zero. */
export function scaleDuration(text: string, factor: number): string {
  const ms = parseDuration(text);
  const scaled = ms === 0 ? 0 : Math.max(1, Math.round(ms * factor));
  // Unchanged values keep their spelling (`24h` stays `24h`, not `1d`).
  return scaled === ms ? text : formatDuration(scaled);
}

/** Multiplies seconds by `factor` with the same millisecond rounding as `scaleDuration`. */
function scaleSeconds(seconds: number, factor: number): string {
  if (seconds === 0) return '0';
  return String(Math.max(1, Math.round(seconds * 1000 * factor)) / 1000);
}

interface Segment {
  kind: 'code' | 'string' | 'comment';
  text: string;
}

/** Splits PromQL into code, string literals and `#` comments, so only code gets rewritten. */
function segments(expr: string): Segment[] {
  const out: Segment[] = [];
  let code = '';
  let i = 0;
  const flush = () => {
    if (code) out.push({ kind: 'code', text: code });
    code = '';
  };
  while (i < expr.length) {
    const c = expr[i] ?? '';
    if (c === '"' || c === "'" || c === '`') {
      flush();
      let j = i + 1;
      while (j < expr.length && expr[j] !== c) j += c !== '`' && expr[j] === '\\' ? 2 : 1;
      if (j >= expr.length) throw new Error(`unterminated string in expression: ${expr}`);
      out.push({ kind: 'string', text: expr.slice(i, j + 1) });
      i = j + 1;
    } else if (c === '#') {
      flush();
      const end = expr.indexOf('\n', i);
      const j = end === -1 ? expr.length : end;
      out.push({ kind: 'comment', text: expr.slice(i, j) });
      i = j;
    } else {
      code += c;
      i++;
    }
  }
  flush();
  return out;
}

/** Scales the durations and the `# seconds:` literals of one PromQL expression. */
export function scaleExpression(expr: string, factor: number): string {
  const parts = segments(expr);
  parts.forEach((part, index) => {
    if (part.kind === 'code') {
      part.text = part.text
        .replace(
          RANGE,
          (_m, s1: string, range: string, s2: string, s3?: string, step?: string, s4?: string) => {
            const subquery =
              s3 === undefined ? '' : `:${s3}${step ? scaleDuration(step, factor) : ''}${s4 ?? ''}`;
            return `[${s1}${scaleDuration(range, factor)}${s2}${subquery}]`;
          },
        )
        .replace(
          OFFSET,
          (_m, keyword: string, d: string) => `${keyword}${scaleDuration(d, factor)}`,
        );
    } else if (part.kind === 'comment' && SECONDS_MARKER.test(part.text)) {
      const before = parts[index - 1];
      const match = before?.kind === 'code' ? TRAILING_NUMBER.exec(before.text) : null;
      if (!before || !match || before.text.slice(match.index).includes('\n')) {
        throw new Error(`"${part.text}" must follow a number on the same line in: ${expr}`);
      }
      const [whole, lead = '', number = '', space = ''] = match;
      before.text =
        before.text.slice(0, before.text.length - whole.length) +
        lead +
        scaleSeconds(Number(number), factor) +
        space;
    }
  });
  return parts.map((p) => p.text).join('');
}

function scaleScalar(node: unknown, factor: number, scale: (text: string, f: number) => string) {
  if (YAML.isScalar(node) && typeof node.value === 'string') node.value = scale(node.value, factor);
}

/**
 * Returns a copy of a Prometheus rules file (YAML text) with every time constant multiplied by
 * `factor` (e.g. `1 / 30`). Comments and layout are kept; annotation texts are not rewritten.
 */
export function scaleRules(yamlText: string, factor: number): string {
  if (!Number.isFinite(factor) || factor <= 0) throw new Error(`factor must be > 0, got ${factor}`);
  const doc = YAML.parseDocument(yamlText);
  if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors[0]?.message ?? ''}`);
  const groups = doc.get('groups', true);
  if (!YAML.isSeq(groups)) throw new Error('rules file has no groups');
  for (const group of groups.items) {
    if (!YAML.isMap(group)) continue;
    scaleScalar(group.get('interval', true), factor, scaleDuration);
    const rules = group.get('rules', true);
    if (!YAML.isSeq(rules)) continue;
    for (const rule of rules.items) {
      if (!YAML.isMap(rule)) continue;
      scaleScalar(rule.get('expr', true), factor, scaleExpression);
      scaleScalar(rule.get('for', true), factor, scaleDuration);
      scaleScalar(rule.get('keep_firing_for', true), factor, scaleDuration);
    }
  }
  const note = ` Scaled by scripts/rules/scale-rules.ts with factor ${factor}: a test copy, not the real rules.`;
  doc.commentBefore = doc.commentBefore ? `${note}\n\n${doc.commentBefore}` : note;
  return doc.toString({ lineWidth: 0 });
}

/** Parses `1/30`, `0.5` or `2` into a number. */
export function parseFactor(text: string): number {
  const [num = '', den] = text.split('/');
  const value = den === undefined ? Number(num) : Number(num) / Number(den);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`not a positive factor: ${text}`);
  return value;
}

function main(argv: readonly string[]): number {
  const option = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i === -1 ? undefined : argv[i + 1];
  };
  const factorText = option('--factor');
  if (!factorText) {
    console.error(
      'usage: scale-rules.ts --factor 1/30 [--in alerts/isa-monitor.rules.yaml] [--out FILE]',
    );
    return 2;
  }
  const input = readFileSync(option('--in') ?? 'alerts/isa-monitor.rules.yaml', 'utf8');
  const output = scaleRules(input, parseFactor(factorText));
  const out = option('--out');
  if (out) writeFileSync(out, output);
  else process.stdout.write(output);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2));
}
