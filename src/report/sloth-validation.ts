/**
 * Sloth's validation rules for one spec's values (docs/cli.md, "validate-slo"), each problem at
 * its key: names start and end with a letter or digit and hold only letters, digits, `.`, `_`
 * and `-`; every query holds the `{{.window}}` range; label keys are Prometheus label names other
 * than `__name__` and values are not empty; an enabled alert needs the alerting name.
 */
import type { AlertSpec } from './sloth-spec.js';

export type Node = Record<string, unknown>;

/** Collects a document's problems and ignored keys, by key path. */
export interface Checker {
  problems: string[];
  warnings: string[];
  problem(path: PropertyKey[], message: string): void;
  warn(path: PropertyKey[]): void;
}

const NAME = /^[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]$/;
/** Sloth's own pattern for the window variable: spaces allowed inside the braces. */
const WINDOW = /\{\{ *\.window *\}\}/g;

export function asRecord(value: unknown): Node | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Node)
    : undefined;
}

/** A name as Sloth allows it; `what` says which name when it is not the key's own value. */
export function checkName(
  value: unknown,
  path: PropertyKey[],
  check: Checker,
  what = '',
): string | undefined {
  const prefix = what === '' ? '' : `${what}: `;
  if (typeof value !== 'string' || value === '') {
    check.problem(path, `${prefix}is required`);
    return undefined;
  }
  if (!NAME.test(value)) {
    check.problem(
      path,
      `${prefix}must start and end with a letter or digit and hold only letters, digits, ".", "_" and "-"`,
    );
    return undefined;
  }
  return value;
}

/** A map of labels (or annotations) with Prometheus's rules for keys and Sloth's for values. */
export function checkLabels(
  value: unknown,
  path: PropertyKey[],
  check: Checker,
  kind: 'label' | 'annotation' = 'label',
): Record<string, string> {
  if (value === undefined || value === null) return {};
  const map = asRecord(value);
  if (!map) {
    check.problem(path, 'must be a mapping of names to strings');
    return {};
  }
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(map)) {
    if (kind === 'label' && key === '__name__') {
      check.problem([...path, key], 'the label __name__ is not allowed');
    } else if (typeof v !== 'string') {
      check.problem([...path, key], 'must be a string (quote it)');
    } else if (v === '') {
      check.problem([...path, key], `the ${kind} value is required`);
    } else {
      out[key] = v;
    }
  }
  return out;
}

/** An SLO plugin chain: read, not applied (the report computes the SLI from its queries). */
export function checkPlugins(value: unknown, path: PropertyKey[], check: Checker): void {
  if (value === undefined || value === null) return;
  const plugins = asRecord(value);
  const chain = plugins?.['chain'];
  if (!plugins || (chain !== undefined && chain !== null && !Array.isArray(chain))) {
    check.problem(path, 'must be a mapping with a chain list');
    return;
  }
  const list = Array.isArray(chain) ? chain : [];
  if (plugins['overridePrevious'] === true && list.length === 0) {
    check.problem(path, 'overridePrevious is set but the chain lists no plugin');
  }
  list.forEach((plugin, i) => {
    const id = asRecord(plugin)?.['id'];
    if (typeof id !== 'string' || id === '')
      check.problem([...path, 'chain', i, 'id'], 'is required');
  });
}

/**
 * A query with the `{{.window}}` range (as Sloth requires), whose brackets balance once the
 * window is filled in; Prometheus itself parses the rest when it evaluates it.
 */
export function checkQuery(
  value: unknown,
  path: PropertyKey[],
  check: Checker,
): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') {
    check.problem(path, 'is required');
    return undefined;
  }
  if (!new RegExp(WINDOW.source).test(value)) {
    check.problem(path, 'must use the {{.window}} template variable as its range');
    return undefined;
  }
  const filled = value.replace(WINDOW, '1m');
  if (filled.includes('{{')) {
    check.problem(path, 'holds a template other than {{.window}}, the only variable Sloth gives');
    return undefined;
  }
  const unbalanced = bracketProblem(filled);
  if (unbalanced !== null) {
    check.problem(path, `is not PromQL: ${unbalanced}`);
    return undefined;
  }
  return value;
}

/** The first unbalanced bracket of a query, outside its string literals; null when none. */
function bracketProblem(query: string): string | null {
  const open: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  let quote: string | null = null;
  for (let i = 0; i < query.length; i++) {
    const c = query[i] as string;
    if (quote !== null) {
      if (c === '\\' && quote !== '`') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '(' || c === '[' || c === '{') open.push(c);
    else if (c in pairs && open.pop() !== pairs[c]) return `unexpected "${c}"`;
  }
  if (quote !== null) return 'unterminated string';
  return open.length > 0 ? `unclosed "${open[open.length - 1]}"` : null;
}

/** A page or ticket alert; enabled (Sloth's default), it needs the alerting name. */
export function checkAlert(
  value: unknown,
  alertName: string,
  path: PropertyKey[],
  check: Checker,
): AlertSpec {
  const alert = asRecord(value) ?? {};
  for (const key of Object.keys(alert)) {
    if (!['disable', 'labels', 'annotations'].includes(key)) check.warn([...path, key]);
  }
  const disable = alert['disable'] === true;
  if (!disable && alertName === '') {
    const which = String(path[path.length - 1]);
    check.problem(
      [...path.slice(0, -1), 'name'],
      `is required while ${which} is enabled (set ${which}.disable: true to go without)`,
    );
  }
  return {
    disable,
    labels: checkLabels(alert['labels'], [...path, 'labels'], check),
    annotations: checkLabels(alert['annotations'], [...path, 'annotations'], check, 'annotation'),
  };
}
