/**
 * A small evaluator of the paging rules' per-location conditions
 * (`environment:isa_ping_latency_critical:condition`, `environment:isa_ping_down:condition`) and
 * the alert's `for:` and `keep_firing_for:`, for simulations too long for promtool (30 days of
 * pings every 10 s would take it many minutes).
 *
 * It reads the condition expressions from the rules file, so it evaluates what Prometheus
 * evaluates: each `or` branch is a conjunction of comparisons of the recorded window counts
 * (`environment:isa_pings_slow_critical:increase1m offset 2m > 0.5`, `A - B < 0.5`,
 * `A > 0.4 * B`) and the `isa_ping_confirm_active` gate (`and on`: confirmation pings on;
 * `unless on`: off). Anything else in the expression is an error, not skipped. Counts are exact:
 * a ping counts in a window from the first 15 s scrape after it finished, as `increase()` over
 * scrapes sees it, without Prometheus' extrapolation (thresholds are written as N - 0.5, so the
 * answer is the same). One location: the quorum is 1.
 */
import YAML from 'yaml';
import { parseDuration } from './durations.js';

/** One finished ping of either family, as the rules count it. */
export interface CountedPing {
  /** Second at which the first scrape sees it. */
  seen: number;
  confirm: boolean;
  slow: boolean;
  failed: boolean;
}

type Quantity = (p: CountedPing) => boolean;

/** What each recorded name counts (docs: alerts/isa-monitor.rules.yaml). */
const QUANTITIES: Readonly<Record<string, Quantity>> = {
  isa_pings: () => true,
  isa_pings_slow_critical: (p) => p.slow,
  isa_pings_failures: (p) => p.failed,
  isa_pings_not_slow_critical: (p) => !p.slow,
  isa_pings_not_failed: (p) => !p.failed,
  isa_ping_attempts: (p) => !p.confirm,
  isa_ping_slow_critical: (p) => !p.confirm && p.slow,
  isa_ping_failures: (p) => !p.confirm && p.failed,
};

interface Term {
  name: string;
  quantity: Quantity;
  windowS: number;
  offsetS: number;
}

type Atom =
  | { kind: 'compare'; left: Term[]; op: '<' | '>'; scale: number; right: Term | null; c: number }
  | { kind: 'confirm'; on: boolean };

export interface Condition {
  branches: Atom[][];
}

const TERM = /environment:([a-z_]+):increase(\w+)(?: offset (\w+))?/;

function term(text: string): Term {
  const m = TERM.exec(text.trim());
  if (!m || m[0] !== text.trim()) throw new Error(`not a recorded window count: ${text}`);
  const quantity = QUANTITIES[m[1] ?? ''];
  if (!quantity) throw new Error(`unknown recorded quantity ${m[1]}`);
  return {
    name: m[1] ?? '',
    quantity,
    windowS: parseDuration(m[2] ?? '') / 1000,
    offsetS: m[3] ? parseDuration(m[3]) / 1000 : 0,
  };
}

function atom(text: string): Atom {
  const t = text.trim();
  if (/^isa_ping_confirm_active\{[^}]*\}$/.test(t)) return { kind: 'confirm', on: true };
  const m = /^(.+?) ([<>]) (?:([\d.]+) \* )?(.+)$/.exec(t);
  if (!m) throw new Error(`not a comparison: ${t}`);
  const left = (m[1] ?? '').split(' - ').map(term);
  const rightText = m[4] ?? '';
  const isNumber = /^[\d.]+$/.test(rightText);
  if (left.length > 2 || (m[3] !== undefined && isNumber))
    throw new Error(`unsupported comparison: ${t}`);
  return {
    kind: 'compare',
    left,
    op: m[2] as '<' | '>',
    scale: m[3] ? Number(m[3]) : 1,
    right: isNumber ? null : term(rightText),
    c: isNumber ? Number(rightText) : 0,
  };
}

/** Parses one condition's expression: `( a and b unless on (...) c ) or ( ... )`. */
export function parseCondition(expr: string): Condition {
  const branches = expr
    .trim()
    .split(/\)\s*or\s*\(/)
    .map((b) => b.replace(/^\s*\(|\)\s*$/g, ''));
  return {
    branches: branches.map((branch) => {
      const atoms: Atom[] = [];
      // Each operand follows `and`, `and on (...)` or `unless on (...)`.
      const parts = branch.split(/\n\s*(and|unless)(?: on \([^)]*\))?\s*\n/);
      atoms.push(atom(parts[0] ?? ''));
      for (let i = 1; i < parts.length; i += 2) {
        const a = atom(parts[i + 1] ?? '');
        if (parts[i] === 'unless') {
          if (a.kind !== 'confirm') throw new Error(`unless of a comparison: ${parts[i + 1]}`);
          atoms.push({ kind: 'confirm', on: false });
        } else atoms.push(a);
      }
      return atoms;
    }),
  };
}

/**
 * The condition recorded as `record` in a rules file, with the `for:` and `keep_firing_for:` of
 * the alert `alert` whose `pings` label is `pings` (the one that reads it).
 */
export function loadCondition(
  rulesText: string,
  record: string,
  alert: string,
  pings: string,
): { condition: Condition; forS: number; keepFiringForS: number } {
  const doc = YAML.parse(rulesText) as {
    groups: Array<{ rules: Array<Record<string, string> & { labels?: Record<string, string> }> }>;
  };
  const rules = doc.groups.flatMap((g) => g.rules);
  const rule = rules.find((r) => r['record'] === record);
  const paging = rules.find(
    (r) => r['alert'] === alert && r.labels?.['pings'] === pings && r['expr']?.includes(record),
  );
  if (!rule?.['expr'] || !paging) throw new Error(`no ${record} or ${alert} reading it`);
  return {
    condition: parseCondition(rule['expr']),
    forS: parseDuration(paging['for'] ?? '0s') / 1000,
    keepFiringForS: parseDuration(paging['keep_firing_for'] ?? '0s') / 1000,
  };
}

/** Counts pings per window with two pointers per window: pings are sorted by `seen`. */
class WindowCounter {
  private readonly cache = new Map<string, { lo: number; hi: number; n: number }>();
  constructor(private readonly pings: readonly CountedPing[]) {}

  /** Pings matching `term` seen in (t - offset - window, t - offset]. */
  count(term: Term, t: number): number {
    const key = `${term.name}/${term.windowS}/${term.offsetS}`;
    let c = this.cache.get(key);
    if (!c) this.cache.set(key, (c = { lo: 0, hi: 0, n: 0 }));
    const end = t - term.offsetS;
    const start = end - term.windowS;
    while (c.hi < this.pings.length && (this.pings[c.hi] as CountedPing).seen <= end) {
      if (term.quantity(this.pings[c.hi] as CountedPing)) c.n++;
      c.hi++;
    }
    while (c.lo < c.hi && (this.pings[c.lo] as CountedPing).seen <= start) {
      if (term.quantity(this.pings[c.lo] as CountedPing)) c.n--;
      c.lo++;
    }
    return c.n;
  }
}

export interface Page {
  /** When the alert started firing. */
  at: number;
  /** When it stopped (keep_firing_for included), or null if still firing at the end. */
  until: number | null;
}

/**
 * Evaluates the condition every `step` seconds from 0 to `end` over `pings` (sorted by `seen`)
 * of one monitor, and returns each page (a transition to firing).
 */
export function evaluatePages(
  loaded: { condition: Condition; forS: number; keepFiringForS: number },
  pings: readonly CountedPing[],
  options: { confirm: boolean; end: number; step?: number },
): Page[] {
  const step = options.step ?? 15;
  const counter = new WindowCounter(pings);
  const holds = (t: number) =>
    loaded.condition.branches.some((atoms) =>
      atoms.every((a) => {
        if (a.kind === 'confirm') return a.on === options.confirm;
        const left = a.left
          .map((x, i) => (i === 0 ? 1 : -1) * counter.count(x, t))
          .reduce((x, y) => x + y, 0);
        const right = a.right ? a.scale * counter.count(a.right, t) : a.c;
        return a.op === '<' ? left < right : left > right;
      }),
    );
  const pages: Page[] = [];
  let pendingSince: number | null = null;
  let firing: Page | null = null;
  let lastTrue = -Infinity;
  for (let t = 0; t <= options.end; t += step) {
    const now = holds(t);
    if (now) {
      lastTrue = t;
      pendingSince ??= t;
      if (!firing && t - pendingSince >= loaded.forS) {
        firing = { at: t, until: null };
        pages.push(firing);
      }
    } else {
      pendingSince = null;
      if (firing && t - lastTrue > loaded.keepFiringForS) {
        firing.until = t;
        firing = null;
      }
    }
  }
  return pages;
}
