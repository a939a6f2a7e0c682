/**
 * One providers run: `GET /service_providers`, judged against the schema and the spec's order,
 * counted by type and compared with the previous run's list.
 */
import { createHash } from 'node:crypto';
import type { ApiResponse } from '../../api/client.js';
import { serviceProvidersResponseSchema, type ServiceProvider } from './endpoint.js';
import { type CheckConfigBase } from '../../config/section.js';
import { type CheckContext, type CheckOutcome } from '../../kernel/check.js';
import { checkResponseSchema } from '../shared/contract.js';
import { requestFailure, requestOptions } from '../shared/request.js';
import { serviceProviders } from './request.js';
import type { ProvidersResult, ProviderType, ProvidersFacts } from './facts.js';

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

/** One run: the provider list, judged. */
export async function runProviders(ctx: Ctx): Promise<CheckOutcome<ProvidersFacts>> {
  await ctx.acquireBudget();
  const response = await serviceProviders(ctx.client, requestOptions(ctx));
  ctx.step('service_providers', response);
  const facts = judge(ctx, response);
  return {
    outcome: facts.result === 'ok' ? 'pass' : 'fail',
    reason: facts.result === 'ok' ? null : facts.result,
    facts,
  };
}
