/**
 * What one environment answers that another may answer differently without any change of shape
 * (docs/drift.md, "Sandbox against production"): the data set behind its provider results
 * (`meta.service_data_set`) and its list of tracked providers (`providers[]` of the provider
 * list). The newest of each is kept, bounded, beside the baselines.
 */

/** One provider of a provider list, as compared across environments. */
export interface ProviderFact {
  id: string;
  name: string;
}

/** The newest data set and provider list one environment answered with. */
export interface EnvironmentFacts {
  /** `meta.service_data_set` of the newest answer that carried one. */
  dataSet?: { value: string; seenAt: string };
  /** The newest provider list, sorted by id. */
  listed?: { list: ProviderFact[]; seenAt: string };
}

/** Bounds of what is kept, whatever the partner sends. */
export const FACT_LIMITS = { listed: 1000, length: 64 } as const;

/**
 * Takes the facts a response body carries into `facts`, in place; true when one changed (a new
 * data set, another provider list), so the caller writes them. `listsProviders`: the body is the
 * answer of an operation that lists the providers (`OperationSpec.listsProviders`).
 */
export function takeFacts(
  facts: EnvironmentFacts,
  body: unknown,
  now: Date,
  listsProviders = false,
): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const record = body as Record<string, unknown>;
  const seenAt = now.toISOString();
  let changed = false;
  const dataSet = dataSetOf(record['meta']);
  if (dataSet !== null) {
    changed = facts.dataSet?.value !== dataSet;
    facts.dataSet = { value: dataSet, seenAt };
  }
  // The provider list's answer holds one list, of `{ id, name }` records.
  const list = listsProviders ? Object.values(record).find(Array.isArray) : undefined;
  const listed = list === undefined ? null : listedOf(list);
  if (listed !== null) {
    changed ||= JSON.stringify(facts.listed?.list) !== JSON.stringify(listed);
    facts.listed = { list: listed, seenAt };
  }
  return changed;
}

function dataSetOf(meta: unknown): string | null {
  if (typeof meta !== 'object' || meta === null) return null;
  const value = (meta as Record<string, unknown>)['service_data_set'];
  return typeof value === 'string' ? value.slice(0, FACT_LIMITS.length) : null;
}

function listedOf(list: unknown[]): ProviderFact[] {
  const listed = new Map<string, string>();
  for (const item of list.slice(0, FACT_LIMITS.listed)) {
    if (typeof item !== 'object' || item === null) continue;
    const { id, name } = item as Record<string, unknown>;
    if (typeof id !== 'string' && typeof id !== 'number') continue;
    const key = String(id).slice(0, FACT_LIMITS.length);
    listed.set(key, typeof name === 'string' ? name.slice(0, FACT_LIMITS.length) : '');
  }
  return [...listed]
    .map(([id, name]) => ({ id, name }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
