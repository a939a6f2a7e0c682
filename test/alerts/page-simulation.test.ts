/**
 * The paging rules with confirmation pings, judged by the small evaluator of their own condition
 * expressions (scripts/rules/page-evaluator.ts) over simulated pings: 30 days of noise page 0
 * times, and the same evaluator does page on a real degradation, within the measured bound. The
 * promtool scenarios (src/checks/ping/scenarios/confirm.yaml) check the same shapes in Prometheus.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { confirmEvents } from '../../scripts/rules/confirm-sequence.js';
import { REPO_ROOT, RULES_PATH } from '../../scripts/rules/gen-rule-tests.js';
import { parseCondition } from '../../scripts/rules/page-evaluator.js';
import {
  FAILED,
  GOOD,
  SLOW,
  noisePages,
  pagingRule,
  timeToPage,
} from '../../scripts/rules/simulate-pages.js';

const ONSET = 30 * 60 + 1; // a fault that the scheduled ping of 30m01s sees first

describe('the 30-day noise simulation', () => {
  it.each(['latency', 'down'] as const)(
    '%s: random bad scheduled pings (5 in 100), confirmation pings bad at their own 5 in 100, page 0 times',
    (kind) => {
      expect(noisePages(kind, { days: 30, rate: 0.05, seed: 11 })).toEqual([]);
    },
    60_000,
  );

  it('pages on noise that is really an outage (40 % bad everywhere)', () => {
    expect(noisePages('latency', { days: 1, rate: 0.4, seed: 11 }).length).toBeGreaterThan(0);
  });
});

describe('the same evaluator on faults', () => {
  it.each(['latency', 'down'] as const)(
    '%s: a hard degradation pages within 4 min 30 s at every onset phase',
    (kind) => {
      for (let phase = 0; phase < 60; phase += 7) {
        const t = timeToPage(kind, { onset: ONSET - phase });
        expect(t, `phase ${phase}`).not.toBeNull();
        expect(t, `phase ${phase}`).toBeLessThanOrEqual(270);
      }
    },
  );

  it.each(['latency', 'down'] as const)('%s: bursts shorter than 3 minutes never page', (kind) => {
    for (const length of [60, 120, 150, 170, 179])
      for (let phase = 0; phase < 60; phase += 7)
        expect(
          timeToPage(kind, { onset: ONSET - phase, length }),
          `${length} s, phase ${phase}`,
        ).toBeNull();
  });

  it('without confirmation pings, the old count pages a hard degradation after 6 min 15 s', () => {
    expect(timeToPage('latency', { onset: ONSET - 1, confirm: false })).toBe(6 * 60 + 15);
  });
});

describe('the evaluator reads the rules file', () => {
  const rules = readFileSync(join(REPO_ROOT, RULES_PATH), 'utf8');

  it('parses both shapes of both conditions, with for: 0s and keep_firing_for: 10m', () => {
    for (const kind of ['latency', 'down'] as const) {
      const rule = pagingRule(kind, true, rules);
      expect(rule.condition.branches).toHaveLength(2);
      expect(rule.forS).toBe(0);
      expect(rule.keepFiringForS).toBe(600);
    }
  });

  it('follows a changed threshold: a stricter sustained count stops a hard degradation paging', () => {
    const stricter = rules.replaceAll(':increase4m10s > 9.5', ':increase4m10s > 99.5');
    const rule = pagingRule('latency', true, stricter);
    expect(rule.condition.branches[0]).toContainEqual(
      expect.objectContaining({ kind: 'compare', c: 99.5 }),
    );
  });

  it('refuses an expression it does not understand', () => {
    expect(() => parseCondition('rate(isa_ping_attempts_total[5m]) > 1')).toThrow(
      /recorded window count/,
    );
  });
});

describe('confirmation sequences', () => {
  const scheduled = (bad: boolean[]) =>
    bad.map((b, m) => ({ start: m * 60 + 1, ...(b ? SLOW : GOOD) }));

  it('send nothing in a healthy period', () => {
    expect(confirmEvents(scheduled([false, false, false]), () => GOOD)).toEqual([]);
  });

  it('end after 3 good confirmation pings, skipping none of them in the first 30 s', () => {
    const events = confirmEvents(scheduled([true, false]), () => GOOD);
    expect(events.map((e) => e.kind)).toEqual(['started', 'run', 'run', 'run', 'ended']);
    expect(events.filter((e) => e.kind === 'run').map((e) => e.start)).toEqual([13, 23, 33]);
  });

  it('during a fault, ping every 10 s but never within 11 s of the next scheduled ping', () => {
    const events = confirmEvents(scheduled([true, true, true]), () => FAILED);
    const starts = events.flatMap((e) => (e.kind === 'run' ? [e.start] : []));
    // Only while another scheduled ping follows (the last one here starts at 121 s).
    for (const s of starts.filter((x) => x < 121)) expect((s - 1) % 60, `${s}`).toBeLessThan(49);
    // 63 to 103 s; the tick of 113 s falls within 11 s of the scheduled ping of 121 s.
    expect(starts.filter((s) => s >= 60 && s < 120)).toEqual([63, 73, 83, 93, 103]);
  });
});
