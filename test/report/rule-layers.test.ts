import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SLO_GROUP } from '../../scripts/rules/slo-rules.js';
import { recordingRules, ruleLayers, rulesFile } from './rule-layers.js';

const rule = (record: string, expr: string) => ({ record, expr });

describe('the recording rules in layers of what they read', () => {
  it('puts a rule one layer above the highest rule it reads, and leaves out what is not needed', () => {
    const rules = [
      rule('a:total', 'sum(increase(x_total[5m]))'),
      rule('b:ratio', 'a:total / sum(y)'),
      rule('unused:ratio', 'a:total * 2'),
      rule('c:ratio', 'avg_over_time(b:ratio[30d]) + a:total'),
    ];
    expect(ruleLayers(rules, ['c:ratio']).map((l) => l.map((r) => r.record))).toEqual([
      ['a:total'],
      ['b:ratio'],
      ['c:ratio'],
    ]);
  });

  it('reads whole metric names: a name that only begins with a rule is not that rule', () => {
    const rules = [rule('a:total', 'x'), rule('b', 'a:total_more + 1')];
    expect(ruleLayers(rules, ['b']).map((l) => l.map((r) => r.record))).toEqual([['b']]);
  });

  it('refuses a target no rule records, and rules that read each other', () => {
    expect(() => ruleLayers([rule('a', 'x')], ['b'])).toThrow('no rule records b');
    expect(() => ruleLayers([rule('a', 'b + 1'), rule('b', 'a + 1')], ['a'])).toThrow(
      'rules read each other',
    );
  });

  it('splits the shipped objectives into slices, period, burn rate and budget remaining', () => {
    const text = readFileSync(
      join(import.meta.dirname, '../../alerts/isa-monitor.rules.yaml'),
      'utf8',
    );
    const layers = ruleLayers(recordingRules(text, SLO_GROUP), [
      'slo:period_error_budget_remaining:ratio',
    ]);
    expect(layers.map((l) => [...new Set(l.map((r) => r.record))])).toEqual([
      ['slo:sli_error:ratio_rate5m'],
      ['slo:sli_error:ratio_rate30d'],
      ['slo:period_burn_rate:ratio'],
      ['slo:period_error_budget_remaining:ratio'],
    ]);
    expect(layers.every((l) => l.length === 3)).toBe(true);
    expect(recordingRules(rulesFile('g', layers[0] ?? []), 'g')).toEqual(layers[0]);
  });
});
