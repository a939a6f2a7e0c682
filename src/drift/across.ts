/**
 * Sandbox against production (docs/drift.md, "Sandbox against production"): the same operation's
 * shapes, the data sets and the provider lists of every environment, side by side. Each
 * difference says which environment has what; one that lasts (`ACROSS_LASTING_MS`) is reported
 * as lasting, since two environments often differ for a moment while a release rolls out.
 */
import type { SpecView } from './compare.js';
import type { EnvironmentFacts } from './facts.js';
import { merge, parentPath, emptyShape, type Shape } from './shape.js';
import type { OperationDrift } from './tracker.js';

/** A difference between environments lasts once it held this long. */
export const ACROSS_LASTING_MS = 60 * 60_000;

export type AcrossKind = 'shape' | 'data_set' | 'provider_only_in' | 'provider_renamed';

/** One difference between environments. */
export interface AcrossDifference {
  /** Stable across comparisons: what the `since` times are kept by. */
  key: string;
  kind: AcrossKind;
  /** The operation, for a difference of shapes. */
  operation?: string;
  /** A JSON path, `service_data_set`, or a provider's id. */
  subject: string;
  /** Environment → what it has there (`absent` where it has nothing). */
  has: Record<string, string>;
}

/** What the comparison reads. */
export interface AcrossInput {
  operations: Readonly<Record<string, Readonly<Record<string, OperationDrift>>>>;
  facts: Readonly<Record<string, EnvironmentFacts>>;
  specOf?: (operation: string) => SpecView | undefined;
}

/** Every difference between the environments, in a stable order. */
export function compareEnvironments(input: AcrossInput): AcrossDifference[] {
  return [...shapeDifferences(input), ...dataSetDifferences(input), ...providerDifferences(input)];
}

/**
 * What an operation answers now: what was seen since its baseline settled (or was accepted), or
 * the baseline while nothing was.
 */
function seenShape(drift: OperationDrift): Shape | null {
  const now = drift.seen.responses > 0 ? drift.seen : drift.baseline;
  if (now.responses === 0) return null;
  const shape = emptyShape();
  merge(shape, now);
  return shape;
}

/** Responses an environment must have answered around a path before its absence says anything. */
export const ACROSS_EVIDENCE = 5;

function shapeDifferences({ operations, specOf }: AcrossInput): AcrossDifference[] {
  const byOperation = new Map<string, Map<string, Shape>>();
  for (const [environment, ops] of Object.entries(operations)) {
    for (const [operation, drift] of Object.entries(ops)) {
      const shape = seenShape(drift);
      if (shape === null) continue;
      const shapes = byOperation.get(operation) ?? new Map<string, Shape>();
      shapes.set(environment, shape);
      byOperation.set(operation, shapes);
    }
  }
  const out: AcrossDifference[] = [];
  for (const [operation, shapes] of byOperation) {
    if (shapes.size < 2) continue;
    const documented = specOf?.(operation)?.documented ?? new Map<string, readonly string[]>();
    const paths = new Set([...shapes.values()].flatMap((shape) => Object.keys(shape.paths)));
    for (const path of [...paths].sort()) {
      const has = pathAcross(shapes, path, documented.get(path) ?? []);
      if (has !== null) {
        out.push({
          key: `shape ${operation} ${path}`,
          kind: 'shape',
          operation,
          subject: path,
          has,
        });
      }
    }
  }
  return out;
}

/**
 * What each environment has at `path`, or null when they agree. Only what cannot be chance is a
 * difference: a field one environment sends in most answers and another never does (where it
 * saw the object around it `ACROSS_EVIDENCE` times), other types beside null, or a value of an enumeration the spec does not
 * document seen in one environment only.
 */
function pathAcross(
  shapes: ReadonlyMap<string, Shape>,
  path: string,
  documented: readonly string[],
): Record<string, string> | null {
  const parent = parentPath(path);
  const described = new Map<string, { often: boolean; never: boolean; text: string }>();
  for (const [environment, shape] of shapes) {
    const at = shape.paths[path];
    const around = parent === null ? 0 : (shape.paths[parent]?.objects ?? 0);
    if (at === undefined && around === 0) continue;
    const types = (at?.types ?? []).filter((type) => type !== 'null');
    const extra = (at?.values ?? []).filter((value) => !documented.includes(value));
    const text = at === undefined ? 'absent' : describe(types, extra);
    // Sent in most answers in one environment, never in another that answered often enough.
    const often = at !== undefined && at.count >= Math.max(ACROSS_EVIDENCE, around / 2);
    const never = at === undefined && around >= ACROSS_EVIDENCE;
    described.set(environment, { often, never, text });
  }
  if (described.size < 2) return null;
  const entries = [...described.values()];
  const presence = entries.some((e) => e.often) && entries.some((e) => e.never);
  const present = entries.filter((e) => e.text !== 'absent' && e.text !== '');
  const contents = new Set(present.map((e) => e.text)).size > 1;
  if (!presence && !contents) return null;
  return Object.fromEntries([...described].map(([environment, e]) => [environment, e.text]));
}

function describe(types: readonly string[], extraValues: readonly string[]): string {
  const values = extraValues.map((value) => JSON.stringify(value)).join(', ');
  return [types.join(' | '), values === '' ? '' : `values ${values}`].filter(Boolean).join('; ');
}

function dataSetDifferences({ facts }: AcrossInput): AcrossDifference[] {
  const has: Record<string, string> = {};
  for (const [environment, known] of Object.entries(facts)) {
    if (known.dataSet !== undefined) has[environment] = known.dataSet.value;
  }
  const values = new Set(Object.values(has));
  if (Object.keys(has).length < 2 || values.size < 2) return [];
  return [{ key: 'data_set', kind: 'data_set', subject: 'service_data_set', has }];
}

function providerDifferences({ facts }: AcrossInput): AcrossDifference[] {
  const lists = new Map<string, Map<string, string>>();
  for (const [environment, known] of Object.entries(facts)) {
    if (known.listed === undefined) continue;
    lists.set(environment, new Map(known.listed.list.map((p) => [p.id, p.name])));
  }
  if (lists.size < 2) return [];
  const ids = new Set([...lists.values()].flatMap((list) => [...list.keys()]));
  const out: AcrossDifference[] = [];
  for (const id of [...ids].sort()) {
    const has: Record<string, string> = {};
    for (const [environment, list] of lists) has[environment] = list.get(id) ?? 'absent';
    const names = Object.values(has);
    if (names.includes('absent')) {
      out.push({ key: `provider_only_in ${id}`, kind: 'provider_only_in', subject: id, has });
    } else if (new Set(names).size > 1) {
      out.push({ key: `provider_renamed ${id}`, kind: 'provider_renamed', subject: id, has });
    }
  }
  return out;
}

/** A difference between environments, dated. */
export interface DatedAcrossDifference extends AcrossDifference {
  since: string;
  /** True once it held `ACROSS_LASTING_MS`. */
  lasting: boolean;
}

/**
 * Dates the differences found now by when each was first found, in `since` (key → ISO time,
 * updated in place: new keys added, gone ones removed).
 */
export function dateAcross(
  found: readonly AcrossDifference[],
  since: Record<string, string>,
  now: Date,
): DatedAcrossDifference[] {
  const keys = new Set(found.map((difference) => difference.key));
  for (const key of Object.keys(since)) if (!keys.has(key)) delete since[key];
  return found.map((difference) => {
    const first = (since[difference.key] ??= now.toISOString());
    const lasting = now.getTime() - Date.parse(first) >= ACROSS_LASTING_MS;
    return { ...difference, since: first, lasting };
  });
}
