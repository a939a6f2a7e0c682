/**
 * What differs between a baseline shape and what an operation returns now, by severity
 * (docs/drift.md, "Severities"):
 * - breaking: a field the spec requires is gone, or holds a type the spec does not allow. The
 *   response_schema contract check already fails on these; drift names them beside the rest, as
 *   that check's (`contract_violation`).
 * - warning: what breaks integrations later: a new enum value, null where never null, a type that
 *   widened or changed, a field or a header we rely on that was always there and is gone, another
 *   content type, a body far outside the sizes seen.
 * - info: a new field or header, which often announces a migration.
 */
import { parentPath, type JsonType, type PathShape, type Shape } from './shape.js';

export const SEVERITIES = ['breaking', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const DIFFERENCE_KINDS = {
  contract_violation: 'breaking',
  new_value: 'warning',
  became_null: 'warning',
  type_widened: 'warning',
  type_changed: 'warning',
  field_gone: 'warning',
  header_gone: 'warning',
  content_type_changed: 'warning',
  size_out_of_range: 'warning',
  new_field: 'info',
  new_header: 'info',
} as const satisfies Record<string, Severity>;
export type DifferenceKind = keyof typeof DIFFERENCE_KINDS;

/** One difference, before it is dated and tracked. */
export interface Finding {
  kind: DifferenceKind;
  severity: Severity;
  /** A JSON path, `header:<name>`, or `(size)`. */
  path: string;
  /** What the baseline holds there, in a few words. */
  baseline: string;
  /** What is seen now. */
  seen: string;
}

/** The headers a client of the API relies on: a header of these that was always sent and is gone is a warning. */
export const RELIED_HEADERS: ReadonlySet<string> = new Set([
  'session_token',
  'retry-after',
  'content-type',
]);

/** A body this many times larger than the largest seen, or smaller than the smallest, is out of range. */
export const SIZE_FACTOR = 4;

/**
 * What the spec says of an operation's responses (`api/spec-shape.ts`): the paths it requires
 * with the types allowed, and the values it documents for its enumerations.
 */
export interface SpecView {
  required: ReadonlyMap<string, readonly JsonType[]>;
  documented: ReadonlyMap<string, readonly string[]>;
}

const NO_SPEC: SpecView = { required: new Map(), documented: new Map() };

/** Every difference between `baseline` and `seen`, the shape of what is returned now. */
export function compareShapes(baseline: Shape, seen: Shape, spec: SpecView = NO_SPEC): Finding[] {
  return [
    ...Object.entries(seen.paths).flatMap(([path, now]) => comparePath(baseline, path, now, spec)),
    ...goneFields(baseline, seen, spec),
    ...compareHeaders(baseline, seen),
    ...compareSize(baseline, seen),
  ];
}

function finding(kind: DifferenceKind, path: string, baseline: string, seen: string): Finding {
  return { kind, severity: DIFFERENCE_KINDS[kind], path, baseline, seen };
}

function comparePath(baseline: Shape, path: string, now: PathShape, spec: SpecView): Finding[] {
  const before = baseline.paths[path];
  if (before === undefined) return newPath(baseline, path, now);
  const typeChanges = compareTypes(path, before, now).map((found) => breaking(found, now, spec));
  return [...typeChanges, ...newValues(path, before, now, spec)];
}

/**
 * A type change the spec does not allow at a path it requires is breaking: the response_schema
 * check already fails on it, and drift names it beside the rest as that check's.
 */
function breaking(found: Finding, now: PathShape, spec: SpecView): Finding {
  const allowed = spec.required.get(found.path);
  if (allowed === undefined || now.types.every((type) => allowed.includes(type))) return found;
  return { ...found, kind: 'contract_violation', severity: 'breaking' };
}

/**
 * A path the baseline never saw is a new field when the object it sits in was seen; deeper paths
 * of a new field are part of it. Items of an array the baseline only saw empty are not new: an
 * empty list of providers is an answer, not a contract.
 */
function newPath(baseline: Shape, path: string, now: PathShape): Finding[] {
  const parent = parentPath(path);
  if (parent === null) return [];
  if (!(baseline.paths[parent]?.objects ?? 0)) return [];
  return [finding('new_field', path, 'absent', types(now.types))];
}

function compareTypes(path: string, before: PathShape, now: PathShape): Finding[] {
  const out: Finding[] = [];
  if (now.types.includes('null') && !before.types.includes('null')) {
    out.push(finding('became_null', path, types(before.types), types(now.types)));
  }
  const was = before.types.filter((t) => t !== 'null');
  const added = now.types.filter((t) => t !== 'null' && !was.includes(t));
  // A field the baseline only ever saw null now carries a value: nullable, as it always was.
  if (added.length === 0 || was.length === 0) return out;
  const kept = now.types.some((t) => t !== 'null' && was.includes(t));
  out.push(
    finding(kept ? 'type_widened' : 'type_changed', path, types(before.types), types(now.types)),
  );
  return out;
}

function newValues(path: string, before: PathShape, now: PathShape, spec: SpecView): Finding[] {
  const known = new Set([...(before.values ?? []), ...(spec.documented.get(path) ?? [])]);
  const fresh = (now.values ?? []).filter((value) => !known.has(value));
  if (fresh.length === 0) return [];
  return [finding('new_value', path, list(before.values ?? []), list(fresh))];
}

/**
 * A field present in every object the baseline saw around it, absent from what is seen now: a
 * warning, or breaking where the spec requires it.
 */
function goneFields(baseline: Shape, seen: Shape, spec: SpecView): Finding[] {
  const out: Finding[] = [];
  for (const [path, before] of Object.entries(baseline.paths)) {
    const parent = parentPath(path);
    if (parent === null || seen.paths[path] !== undefined) continue;
    const around = baseline.paths[parent]?.objects ?? 0;
    const aroundNow = seen.paths[parent]?.objects ?? 0;
    if (around > 0 && before.count >= around && aroundNow > 0) {
      const kind = spec.required.has(path) ? 'contract_violation' : 'field_gone';
      out.push(finding(kind, path, 'always present', 'absent'));
    }
  }
  return out;
}

function compareHeaders(baseline: Shape, seen: Shape): Finding[] {
  const out: Finding[] = [];
  for (const [name, count] of Object.entries(baseline.headers)) {
    const always = count >= baseline.responses;
    if (always && RELIED_HEADERS.has(name) && !(name in seen.headers)) {
      out.push(finding('header_gone', `header:${name}`, 'always sent', 'absent'));
    }
  }
  for (const name of Object.keys(seen.headers)) {
    if (!(name in baseline.headers))
      out.push(finding('new_header', `header:${name}`, 'absent', 'sent'));
  }
  const newTypes = seen.contentTypes.filter((type) => !baseline.contentTypes.includes(type));
  if (newTypes.length > 0 && baseline.contentTypes.length > 0) {
    out.push(
      finding(
        'content_type_changed',
        'header:content-type',
        list(baseline.contentTypes),
        list(newTypes),
      ),
    );
  }
  return out;
}

function compareSize(baseline: Shape, seen: Shape): Finding[] {
  if (baseline.responses === 0 || seen.responses === 0) return [];
  const { min, max } = baseline.size;
  const tooLarge = seen.size.max > Math.max(max, 1) * SIZE_FACTOR;
  const tooSmall = min > 0 && seen.size.min * SIZE_FACTOR < min;
  if (!tooLarge && !tooSmall) return [];
  const now = tooLarge ? seen.size.max : seen.size.min;
  return [finding('size_out_of_range', '(size)', `${min}–${max} bytes`, `${now} bytes`)];
}

function types(list: readonly JsonType[]): string {
  return list.join(' | ');
}

function list(values: readonly string[]): string {
  const shown = values.slice(0, 8).map((value) => JSON.stringify(value));
  return values.length > 8 ? `${shown.join(', ')}, …` : shown.join(', ');
}
