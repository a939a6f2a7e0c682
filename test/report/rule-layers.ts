/**
 * The shipped recording rules split by what they read, for `promtool tsdb create-blocks-from
 * rules`: it evaluates every rule of its files against the data already in Prometheus, so a rule
 * that reads another recorded series can only be backfilled once that series is in the database.
 * Layer 0 reads exported series only; layer k reads series recorded by layers below k.
 */
import YAML from 'yaml';

export interface RecordingRule {
  record: string;
  expr: string;
  labels?: Record<string, string>;
}

/** The recording rules of the group `name` of a rules file (alerting rules are left out). */
export function recordingRules(text: string, name: string): RecordingRule[] {
  const doc = YAML.parse(text) as { groups?: Array<{ name: string; rules: unknown[] }> } | null;
  const group = doc?.groups?.find((g) => g.name === name);
  if (!group) throw new Error(`no rule group "${name}"`);
  return (group.rules as Array<Partial<RecordingRule>>).filter(
    (r): r is RecordingRule => typeof r.record === 'string' && typeof r.expr === 'string',
  );
}

/** The recorded names `expr` reads, as whole metric names. */
function reads(expr: string, names: ReadonlySet<string>): string[] {
  const tokens = new Set(expr.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? []);
  return [...names].filter((n) => tokens.has(n));
}

/**
 * The rules that `targets` (recorded names) need, themselves included, in layers: each rule sits
 * one layer above the highest rule it reads. Rules nothing in `targets` needs are left out.
 */
export function ruleLayers(
  rules: readonly RecordingRule[],
  targets: readonly string[],
): RecordingRule[][] {
  const names = new Set(rules.map((r) => r.record));
  for (const t of targets) if (!names.has(t)) throw new Error(`no rule records ${t}`);
  const needed = new Set(targets);
  for (let grew = true; grew;) {
    grew = false;
    for (const r of rules) {
      if (!needed.has(r.record)) continue;
      for (const n of reads(r.expr, names)) {
        if (!needed.has(n)) {
          needed.add(n);
          grew = true;
        }
      }
    }
  }
  const depth = new Map<string, number>();
  const depthOf = (name: string, path: readonly string[]): number => {
    const known = depth.get(name);
    if (known !== undefined) return known;
    if (path.includes(name))
      throw new Error(`rules read each other: ${[...path, name].join(' → ')}`);
    const below = rules
      .filter((r) => r.record === name)
      .flatMap((r) => reads(r.expr, names).filter((n) => n !== name))
      .map((n) => depthOf(n, [...path, name]));
    const d = below.length === 0 ? 0 : Math.max(...below) + 1;
    depth.set(name, d);
    return d;
  };
  const layers: RecordingRule[][] = [];
  for (const r of rules) {
    if (!needed.has(r.record)) continue;
    const d = depthOf(r.record, []);
    (layers[d] ??= []).push(r);
  }
  return layers;
}

/** A rules file of one group holding `rules`, for promtool. */
export function rulesFile(name: string, rules: readonly RecordingRule[]): string {
  return YAML.stringify({ groups: [{ name, rules }] });
}
