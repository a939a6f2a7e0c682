/**
 * The rules file itself: promtool accepts it with the duplicate-rules lint, every alert of the
 * contract is there with the right severities and annotations, and the rules only use metrics
 * the monitor exports, with the time constants they depend on kept in step.
 */
import { describe, expect, it } from 'vitest';
import { METRICS } from '../../src/checks/index.js';
import { parseDuration } from '../../scripts/rules/durations.js';
import {
  CONTRACT_ALERTS,
  KNOWN_ALERTS,
  RULES_FILE,
  RUNBOOK_BASE,
  alertRules,
  allRules,
  groups,
  recordingRules,
} from './rules-file.js';
import { runTool } from './tools.js';

/** Names a rule may read besides the monitor's own metrics. */
const OTHER_SERIES = new Set(['up', 'process_start_time_seconds']);

function exportedSeries(): Set<string> {
  const names = new Set<string>();
  for (const def of Object.values(METRICS)) {
    if (def.type === 'histogram') {
      for (const suffix of ['_bucket', '_count', '_sum']) names.add(def.name + suffix);
    } else names.add(def.name);
  }
  return names;
}

describe('alerts/isa-monitor.rules.yaml', () => {
  it('passes promtool check rules with the duplicate-rules lint as fatal', async () => {
    const result = await runTool('promtool', [
      'check',
      'rules',
      '--lint=duplicate-rules',
      '--lint-fatal',
      RULES_FILE,
    ]);
    expect(result.stderr + result.stdout).toContain('SUCCESS');
    expect(result.code, result.stderr).toBe(0);
  });

  it("derives the expected alerts from the monitor's and every check's rules, the contract's among them", () => {
    for (const [name, list] of Object.entries(KNOWN_ALERTS)) {
      expect([...(CONTRACT_ALERTS[name] ?? [])].sort(), name).toEqual([...list].sort());
    }
  });

  it('defines every alert of the contract with exactly the expected severities', () => {
    const severities: Record<string, string[]> = {};
    // A page may have two rules (pings=scheduled and pings=confirmed): one severity still.
    for (const rule of alertRules)
      (severities[rule.alert] ??= []).push(rule.labels?.['severity'] ?? '');
    for (const [name, list] of Object.entries(severities))
      severities[name] = [...new Set(list)].sort();
    const expected = Object.fromEntries(
      Object.entries(CONTRACT_ALERTS).map(([name, list]) => [name, [...list].sort()]),
    );
    expect(severities).toEqual(expected);
  });

  it('pages (critical) for environment-scoped alerts only in production, tickets elsewhere', () => {
    for (const rule of alertRules) {
      const severity = rule.labels?.['severity'];
      if (rule.alert.startsWith('IsaMonitor') || rule.alert === 'Watchdog') continue;
      if (severity === 'critical')
        expect(rule.expr, rule.alert).toContain('{environment="production"}');
      else expect(rule.expr, rule.alert).not.toContain('{environment="production"}');
    }
  });

  it('gives every alert a static summary, a templated description and a runbook section', () => {
    for (const rule of alertRules) {
      const a = rule.annotations ?? {};
      expect(Object.keys(a).sort(), rule.alert).toEqual(['description', 'runbook_url', 'summary']);
      expect(a['summary'], rule.alert).toMatch(/^[A-Z][^{}]*\.$/);
      // Watchdog has no labels and a constant value: nothing to template.
      if (rule.alert !== 'Watchdog') expect(a['description'], rule.alert).toMatch(/\{\{.+\}\}/);
      expect(a['runbook_url'], rule.alert).toBe(`${RUNBOOK_BASE}#${rule.alert.toLowerCase()}`);
    }
  });

  it('holds pages with keep_firing_for and debounces every alert but Watchdog with for', () => {
    for (const rule of alertRules) {
      if (rule.alert === 'Watchdog') continue;
      expect(rule.for, rule.alert).toBeDefined();
      if (rule.labels?.['severity'] === 'critical')
        expect(rule.keep_firing_for, rule.alert).toBeDefined();
    }
  });

  // The file is assembled from fragments (scripts/rules/assemble-rules.ts), so its order is the
  // fragments' order: what keeps an alert reading this evaluation's values is checked here.
  it('records every series before, and in the same group as, every rule that reads it', () => {
    const recordedIn = new Map<string, string>();
    for (const group of groups)
      for (const rule of group.rules) if (rule.record) recordedIn.set(rule.record, group.name);
    for (const group of groups) {
      const recordedSoFar = new Set<string>();
      for (const rule of group.rules) {
        const reads = [
          ...rule.expr.matchAll(/\b(?:[a-z_]+:isa_[a-z0-9_]+|slo:[a-z_]+):[a-z0-9_]+\b/g),
        ].map((m) => m[0]);
        for (const name of reads) {
          expect(recordedIn.get(name), `${rule.record ?? rule.alert} reads ${name}`).toBe(
            group.name,
          );
          expect(recordedSoFar.has(name), `${rule.record ?? rule.alert} reads ${name}`).toBe(true);
        }
        if (rule.record) recordedSoFar.add(rule.record);
      }
    }
  });

  it('records every counter as one expression over scraped series, never from another counter', () => {
    // Two recorded counters are read by two queries, and a scrape can commit between them: their
    // difference dips, and increase() takes the dip for a reset (docs/alerts.md, "Counters the
    // rules record").
    const counters = recordingRules.filter((rule) => rule.record.endsWith(':total'));
    expect(counters.map((rule) => rule.record)).toContain(
      'environment:isa_pings_not_slow_critical:total',
    );
    for (const rule of counters) {
      const readsCounters = [...rule.expr.matchAll(/\b[a-z_]+:isa_[a-z0-9_]+:total\b/g)].map(
        (m) => m[0],
      );
      expect(readsCounters, rule.record).toEqual([]);
    }
  });

  it('names recording rules level:metric:operations, and the objectives as Sloth does', () => {
    // The objectives' series keep Sloth's names, so the SLO dashboards people have read them
    // (docs/alerts.md, "Objectives").
    const sloth = recordingRules.filter((rule) => rule.record.startsWith('slo:'));
    expect(sloth.map((rule) => rule.record)).toContain('slo:period_error_budget_remaining:ratio');
    // Sloth's UI lists objectives by sloth_slo_info, a name of Sloth's without colons.
    expect(recordingRules.map((rule) => rule.record)).toContain('sloth_slo_info');
    for (const rule of recordingRules) {
      if (rule.record === 'sloth_slo_info') continue;
      if (rule.record.startsWith('slo:')) expect(rule.record).toMatch(/^slo:[a-z_]+:[a-z0-9_]+$/);
      else expect(rule.record).toMatch(/^[a-z_]+:isa_[a-z0-9_]+:[a-z0-9_]+$/);
    }
  });

  it('reads only metrics the monitor exports, always scoped to job="isa-monitor"', () => {
    const exported = exportedSeries();
    for (const rule of allRules) {
      // Metric names not part of a recording rule name (`environment:isa_x:increase10m`).
      for (const [, name, matchers] of rule.expr.matchAll(
        /(?<![\w:])((?:isa|process)_[a-z0-9_]+|up)(?![\w:])(\{[^}]*\})?/g,
      )) {
        if (name === undefined) continue;
        expect(
          exported.has(name) || OTHER_SERIES.has(name),
          `${name} in ${rule.record ?? rule.alert}`,
        ).toBe(true);
        expect(matchers ?? '', `${name} in ${rule.record ?? rule.alert}`).toContain(
          'job="isa-monitor"',
        );
      }
    }
  });

  it("joins one monitor's series on location too, never on (job, instance) alone", () => {
    // Locations may share an instance and differ only in `location` (docs/alerts.md, "Joins: one
    // monitor's series"); `up` has no `location` when the config key sets it, so no join reads it.
    let joins = 0;
    for (const rule of allRules) {
      const name = rule.record ?? rule.alert;
      for (const [clause, labels] of rule.expr.matchAll(/\bon \(([^)]*)\)/g)) {
        const list = (labels ?? '').split(',').map((l) => l.trim());
        if (!list.includes('instance')) continue;
        joins++;
        expect(list, `${clause} in ${name}`).toContain('location');
      }
      expect(rule.expr, `${name} joins up`).not.toMatch(/\bon \([^)]*\)\s*\(?\s*up\{/);
    }
    expect(joins).toBeGreaterThanOrEqual(15);
  });

  it('labels each latency threshold with its own value as `le`: the bound it is judged at', () => {
    // Every configured threshold is a bound of the ping histograms (`bucketsOf`), so the rule
    // enumerates no bounds: count_values turns the threshold's value into the `le` label.
    const mapping = recordingRules.find(
      (r) => r.record === 'environment_level:isa_latency_threshold_seconds:bucket',
    );
    expect(mapping?.expr.replace(/\s+/g, ' ').trim()).toBe(
      'count_values without () ("le", isa_latency_threshold_seconds{job="isa-monitor"})' +
        ' * ignoring (le) group_left isa_latency_threshold_seconds{job="isa-monitor"}',
    );
  });

  it('keeps every literal marked "# seconds" equal to a range window of the same expression', () => {
    let marked = 0;
    for (const rule of allRules) {
      const windows = [...rule.expr.matchAll(/\[(\w+)\]/g)].map((m) => parseDuration(m[1] ?? ''));
      for (const [, seconds] of rule.expr.matchAll(/([\d.]+) # seconds/g)) {
        marked++;
        expect(windows, `${rule.record ?? rule.alert}: ${seconds} s`).toContain(
          Number(seconds) * 1000,
        );
      }
    }
    expect(marked).toBe(5);
  });

  it('writes no other time as a bare number: stalled is measured in ping intervals', () => {
    const stalled = alertRules.find((r) => r.alert === 'IsaMonitorStalled');
    expect(stalled?.expr).toMatch(/> 5 \* isa_ping_interval_seconds/);
    for (const rule of allRules)
      expect(rule.expr, rule.record ?? rule.alert).not.toMatch(/\b(?:300|600|900|3600)\b/);
  });
});
