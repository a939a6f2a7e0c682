/** What a providers run finds: its bounded results, the provider types it counts, its facts. */
import { REQUEST_FAILURES } from '../shared/request.js';

/** Result of one run. */
export const PROVIDERS_RESULTS = [
  'ok',
  'empty',
  'order_violation',
  'invalid_body',
  ...REQUEST_FAILURES,
] as const;

export type ProvidersResult = (typeof PROVIDERS_RESULTS)[number];

/** The `type` of a provider record, as the spec names them: the `type` label. */
export const PROVIDER_TYPES = ['fcc_provider', 'supplemental_brand'] as const;

export type ProviderType = (typeof PROVIDER_TYPES)[number];

export interface ProvidersFacts {
  result: ProvidersResult;
  /** Providers of each type in this run's list; null when no valid list came back. */
  counts: Record<ProviderType, number> | null;
  /** Content hash of the latest valid list, this run's or an earlier one's. */
  listHash: string | null;
  /** True when this run's list differs from the latest valid one before it. */
  changed: boolean;
  /** The first breach of the ordering promise, e.g. `record 3: units above record 2`. */
  violation: string | null;
}

export function total(counts: Record<ProviderType, number>): number {
  return PROVIDER_TYPES.reduce((sum, t) => sum + counts[t], 0);
}
