/**
 * scale-rules.ts: every time constant of the rules scales by one factor, nothing else changes,
 * and the scaled copy is still a valid rules file for promtool.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { parseDuration } from '../../scripts/rules/durations.js';
import {
  parseFactor,
  scaleDuration,
  scaleExpression,
  scaleRules,
} from '../../scripts/rules/scale-rules.js';
import { allRules, rulesText, type Rule } from './rules-file.js';
import { runTool } from './tools.js';

function rulesOf(text: string): Rule[] {
  return (YAML.parse(text) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((g) => g.rules);
}

/** Every range window and `# seconds` literal of an expression, in order, in milliseconds. */
function timesOf(expr: string): number[] {
  const times: number[] = [];
  for (const m of expr.matchAll(/\[(\w+)(?::(\w+))?\]|([\d.]+) # seconds|offset (\w+)/g)) {
    if (m[1]) times.push(parseDuration(m[1]));
    if (m[2]) times.push(parseDuration(m[2]));
    if (m[3]) times.push(Math.round(Number(m[3]) * 1000));
    if (m[4]) times.push(parseDuration(m[4]));
  }
  return times;
}

describe('scaleDuration', () => {
  it('scales to whole milliseconds, never below 1 ms, and leaves zero alone', () => {
    expect(scaleDuration('10m', 1 / 30)).toBe('20s');
    expect(scaleDuration('3d', 1 / 30)).toBe('2h24m');
    expect(scaleDuration('10m', 1 / 7)).toBe('1m25s714ms');
    expect(scaleDuration('1ms', 1 / 30)).toBe('1ms');
    expect(scaleDuration('0s', 1 / 30)).toBe('0s');
    expect(scaleDuration('2m', 2)).toBe('4m');
  });
});

describe('scaleExpression', () => {
  it('scales ranges, subqueries and offsets but not strings, label values or counts', () => {
    const expr =
      'rate(x{path="[10m]"}[5m] offset 1h) > 4.5 and max_over_time(y[30m:1m]) > 0 or z[2h:]';
    expect(scaleExpression(expr, 1 / 30)).toBe(
      'rate(x{path="[10m]"}[10s] offset 2m) > 4.5 and max_over_time(y[1m:2s]) > 0 or z[4m:]',
    );
  });

  it('scales a literal marked "# seconds" to the same millisecond as its window', () => {
    const expr = 'increase(x[10m])\n/ (\n  600 # seconds: the window\n  / y\n)';
    expect(scaleExpression(expr, 1 / 7)).toBe(
      'increase(x[1m25s714ms])\n/ (\n  85.714 # seconds: the window\n  / y\n)',
    );
  });

  it('leaves other comments and numbers alone', () => {
    expect(scaleExpression('x > 300 # five minutes, not scaled', 1 / 30)).toBe(
      'x > 300 # five minutes, not scaled',
    );
  });

  it('refuses a "# seconds" marker that follows no number on its line', () => {
    expect(() => scaleExpression('x\n# seconds: nothing to scale\n', 2)).toThrow(
      /must follow a number/,
    );
    expect(() => scaleExpression('foo # seconds', 2)).toThrow(/must follow a number/);
  });
});

describe('parseFactor', () => {
  it('reads fractions and decimals, and rejects nonsense', () => {
    expect(parseFactor('1/30')).toBeCloseTo(1 / 30);
    expect(parseFactor('0.5')).toBe(0.5);
    expect(() => parseFactor('0')).toThrow();
    expect(() => parseFactor('fast')).toThrow();
  });
});

describe('scaleRules on the real rules', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'isa-scale-rules-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('multiplies every window, denominator, for and keep_firing_for by the factor', () => {
    const factor = 1 / 30;
    const scaled = rulesOf(scaleRules(rulesText, factor));
    expect(scaled).toHaveLength(allRules.length);
    allRules.forEach((rule, i) => {
      const copy = scaled[i] as Rule;
      const name = rule.record ?? rule.alert;
      expect(timesOf(copy.expr), name).toEqual(
        timesOf(rule.expr).map((ms) => Math.max(1, Math.round(ms * factor))),
      );
      for (const key of ['for', 'keep_firing_for'] as const) {
        const original = rule[key];
        if (original === undefined) expect(copy[key], `${name} ${key}`).toBeUndefined();
        else
          expect(parseDuration(copy[key] ?? ''), `${name} ${key}`).toBe(
            Math.round(parseDuration(original) * factor),
          );
      }
      // Everything but the time constants is untouched.
      const strip = (r: Rule) => ({
        ...r,
        expr: r.expr.replace(/\[[^\]]*\]|[\d.]+ # seconds|offset \w+/g, 'T'),
        for: 0,
        keep_firing_for: 0,
      });
      expect(strip(copy), name).toEqual(strip(rule));
    });
  });

  it('keeps each window and its expected-count denominator equal after rounding', () => {
    for (const rule of rulesOf(scaleRules(rulesText, 1 / 7))) {
      const denominators = [...rule.expr.matchAll(/([\d.]+) # seconds/g)].map((m) =>
        Math.round(Number(m[1]) * 1000),
      );
      const windows = [...rule.expr.matchAll(/\[(\w+)\]/g)].map((m) => parseDuration(m[1] ?? ''));
      for (const d of denominators) expect(windows, rule.record).toContain(d);
    }
  });

  it('still passes promtool check rules, with a header saying it is a scaled copy', async () => {
    for (const factor of [1 / 30, 1 / 7, 3]) {
      const text = scaleRules(rulesText, factor);
      expect(text.split('\n')[0]).toContain(`factor ${factor}`);
      const path = join(dir, `scaled-${factor}.yaml`);
      await writeFile(path, text);
      const result = await runTool('promtool', [
        'check',
        'rules',
        '--lint=duplicate-rules',
        '--lint-fatal',
        path,
      ]);
      expect(result.code, `factor ${factor}: ${result.stdout}${result.stderr}`).toBe(0);
    }
  });

  it('leaves the rules as they were with factor 1, apart from the header', () => {
    const text = scaleRules(rulesText, 1);
    expect(rulesOf(text)).toEqual(allRules);
  });
});
