/**
 * The provider-list check: `GET /service_providers`. It validates the list against the API's
 * schema and the spec's ordering promise (total_residential_units descending; each supplemental
 * brand right after its parent, repeating the parent's fcc_name and units), exports how many
 * providers of each type the list holds, and counts changes of its content.
 *
 * Whether a list that shrank is a problem depends on how much it shrank over how long: the alert
 * rule judges that from `isa_providers_listed` (docs/alerts.md, `IsaProviderListShrank`). An empty
 * list fails the run: the spec describes no state in which no provider is tracked.
 */
import { createHash } from 'node:crypto';
import type { ApiResponse } from '../../api/client.js';
import { serviceProvidersResponseSchema, type ServiceProvider } from '../../api/schemas.js';
import { checkSection, type CheckConfigBase } from '../../config/section.js';
import { defineCheck, type CheckContext } from '../../kernel/check.js';
import { checkResponseSchema } from '../shared/contract.js';
import {
  REQUEST_FAILURES,
  requestFailure,
  requestOptions,
  initialResults,
} from '../shared/request.js';
import { serviceProviders } from './request.js';

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

const metrics = {
  providersRuns: {
    name: 'isa_providers_runs_total',
    help: 'Provider-list checks by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(PROVIDERS_RESULTS) },
  },
  providersListed: {
    name: 'isa_providers_listed',
    help: 'Providers in the latest valid GET /service_providers list, by type.',
    type: 'gauge',
    labels: ['environment', 'type'],
  },
  providersListChanges: {
    name: 'isa_providers_list_changes_total',
    help: 'Times the content of the provider list differed from the previous valid list.',
    type: 'counter',
    labels: ['environment'],
  },
} as const;

export const providersCheck = defineCheck({
  name: 'providers',
  // On unless configured off: one read-only request every 15 minutes, no assumption about data.
  config: checkSection({
    name: 'providers',
    defaults: { enabled: true, interval: '15m', timeout: '30s' },
    shape: {},
    docs: {
      summary:
        "the `GET /service_providers` check: schema, the spec's ordering, count by type, content changes. **On by default** (see below)",
      keys: { request_timeout: { meaning: 'a run is one request' } },
    },
    toConfig: () => ({}),
  }),
  metrics,
  operations: ['service_providers'],
  contractChecks: ['response_schema', 'provider_order'],
  summaryKeys: ['providers'],
  async run(ctx) {
    await ctx.acquireBudget();
    const response = await serviceProviders(ctx.client, requestOptions(ctx));
    ctx.step('service_providers', response);
    const facts = judge(ctx, response);
    return {
      outcome: facts.result === 'ok' ? 'pass' : 'fail',
      reason: facts.result === 'ok' ? null : facts.result,
      facts,
    };
  },
  summary: (facts) => ({ providers: facts?.counts ? String(total(facts.counts)) : null }),
  trace: (facts) => {
    if (!facts?.counts) return [];
    const lines = [
      `providers ${total(facts.counts)} (${PROVIDER_TYPES.map((t) => `${t} ${facts.counts?.[t] ?? 0}`).join(', ')})`,
    ];
    if (facts.violation) lines.push(`order: ${facts.violation}`);
    if (facts.changed) lines.push('list changed since the previous run');
    return lines;
  },
  record(facts, sink) {
    sink.inc(metrics.providersRuns, { result: facts.result });
    if (facts.counts) {
      for (const type of PROVIDER_TYPES) {
        sink.set(metrics.providersListed, { type }, facts.counts[type]);
      }
    }
    if (facts.changed) sink.inc(metrics.providersListChanges, {});
  },
});

type Ctx = CheckContext<CheckConfigBase>;

function judge(ctx: Ctx, response: ApiResponse): ProvidersFacts {
  // The hash of the latest valid list, kept from one run to the next: a failed run in between
  // keeps it, so a change across the failure is still seen.
  const kept = ctx.retained(() => ({ listHash: null as string | null }));
  const previousHash = kept.listHash;
  const failed = (result: ProvidersResult): ProvidersFacts => ({
    result,
    counts: null,
    listHash: previousHash,
    changed: false,
    violation: null,
  });
  const failure = requestFailure(response);
  if (failure !== null) return failed(failure);
  if (response.bodyError) return failed('invalid_body');
  const validation = checkResponseSchema(ctx, serviceProvidersResponseSchema, response);
  if (!validation.data) return failed('invalid_body');

  const providers = validation.data.providers;
  const violation = orderViolation(providers);
  if (providers.length > 0) {
    ctx.contract('provider_order', violation === null ? 'pass' : 'fail', violation ?? undefined);
  }
  if (violation !== null) {
    ctx.log.warn({ violation }, 'the provider list breaks the ordering the API promises');
  }
  const listHash = contentHash(providers);
  const changed = previousHash !== null && previousHash !== listHash;
  kept.listHash = listHash;
  if (changed) ctx.log.info({ providers: providers.length }, 'the provider list changed');
  let result: ProvidersResult = 'ok';
  if (providers.length === 0) result = 'empty';
  else if (violation !== null) result = 'order_violation';
  return { result, counts: countByType(providers), listHash, changed, violation };
}

/**
 * The first breach of the spec's ordering, or null: units never rise from one record to the next,
 * and a supplemental brand follows its parent (or a brand of the same parent) with the parent's
 * fcc_name and units. Records are named by position only: names are the API's data, not ours.
 */
export function orderViolation(providers: readonly ServiceProvider[]): string | null {
  let parent: ServiceProvider | null = null;
  for (const [i, record] of providers.entries()) {
    const before = i > 0 ? providers[i - 1] : undefined;
    const rises =
      before !== undefined && record.total_residential_units > before.total_residential_units;
    if (record.type === 'fcc_provider') {
      if (rises) return `record ${i + 1}: total_residential_units above record ${i}`;
      parent = record;
      continue;
    }
    // A brand is judged by its parent first: a brand out of place usually breaks both rules, and
    // "not after its parent" says what happened.
    if (parent === null) return `record ${i + 1}: supplemental brand before any parent provider`;
    if (before?.type === 'supplemental_brand' && before.fcc_name !== record.fcc_name) {
      return `record ${i + 1}: supplemental brand not right after its parent`;
    }
    if (record.fcc_name !== parent.fcc_name) {
      return `record ${i + 1}: supplemental brand not right after its parent (fcc_name differs)`;
    }
    if (record.total_residential_units !== parent.total_residential_units) {
      return `record ${i + 1}: supplemental brand does not repeat its parent's units`;
    }
    if (rises) return `record ${i + 1}: total_residential_units above record ${i}`;
  }
  return null;
}

function countByType(providers: readonly ServiceProvider[]): Record<ProviderType, number> {
  const counts: Record<ProviderType, number> = { fcc_provider: 0, supplemental_brand: 0 };
  for (const p of providers) counts[p.type] += 1;
  return counts;
}

/** A hash of the fields the spec names, in list order: any change of content or order shows. */
function contentHash(providers: readonly ServiceProvider[]): string {
  const canonical = providers.map((p) => [
    p.id,
    p.name,
    p.fcc_name,
    p.total_residential_units,
    p.type,
  ]);
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex').slice(0, 16);
}

function total(counts: Record<ProviderType, number>): number {
  return PROVIDER_TYPES.reduce((sum, t) => sum + counts[t], 0);
}
