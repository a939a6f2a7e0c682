/**
 * One coverage run: `GET /coverage` for the configured geography, judged against the schema and
 * the query, then the same endpoint without any geography, which the API must refuse.
 */
import * as coverageApi from './request.js';
import type { CoverageQuery } from './request.js';
import { coverageResponseSchema } from './endpoint.js';
import { type CheckContext, type CheckOutcome } from '../../kernel/check.js';
import { checkResponseSchema } from '../shared/contract.js';
import { requestFailure, requestOptions } from '../shared/request.js';
import type { CoverageResult, CoverageFacts } from './facts.js';
import type { CoverageConfig } from './config.js';

type Ctx = CheckContext<CoverageConfig>;


async function queryCoverage(ctx: Ctx, facts: CoverageFacts): Promise<CoverageResult> {
  const geography = ctx.config.geography;
  await ctx.acquireBudget();
  const response = await coverageApi.coverage(ctx.client, geography, requestOptions(ctx));
  ctx.step('coverage', response);
  const failure = requestFailure(response);
  if (failure !== null) return failure;
  if (response.bodyError) return 'invalid_body';
  const validation = checkResponseSchema(ctx, coverageResponseSchema, response);
  if (!validation.data) return 'invalid_body';

  const providers = validation.data.data;
  facts.providers = providers.length;
  const violation = matchedAreasViolation(geography, providers);
  if (providers.length > 0) {
    ctx.contract('matched_areas', violation === null ? 'pass' : 'fail', violation ?? undefined);
  }
  if (violation !== null) {
    facts.matchedAreasViolation = violation;
    ctx.log.warn({ violation }, 'coverage matched_areas do not fit the query');
    return 'invalid_matched_areas';
  }
  if (providers.length < ctx.config.minProviders) {
    ctx.log.info(
      { providers: providers.length, minProviders: ctx.config.minProviders },
      'fewer providers cover the configured geography than expected',
    );
    return 'below_expectation';
  }
  return 'ok';
}


/** The spec requires at least one geographic parameter: the API must refuse a request without. */
async function queryWithoutGeography(ctx: Ctx, facts: CoverageFacts): Promise<CoverageResult> {
  await ctx.acquireBudget();
  const response = await coverageApi.coverage(ctx.client, {}, requestOptions(ctx));
  ctx.step('coverage_no_geography', response, isRefusal);
  facts.refusalStatus = response.statusCode;
  const status = response.statusCode;
  if (status !== null && isRefusal(status)) {
    ctx.contract('geography_required', 'pass');
    return 'ok';
  }
  if (status !== null && status >= 200 && status < 300) {
    ctx.contract('geography_required', 'fail', `HTTP ${status}`);
    return 'geography_not_required';
  }
  // No answer, a 5xx, a 401 or a 429 says nothing about the rule either way.
  ctx.contract('geography_required', 'error', status === null ? 'no response' : `HTTP ${status}`);
  return requestFailure(response) ?? 'unexpected_status';
}


/** A 4xx that refuses the request itself: not a credential (401) or rate (429) answer. */
function isRefusal(status: number): boolean {
  return status >= 400 && status < 500 && status !== 401 && status !== 429;
}


/**
 * The first provider whose `matched_areas` does not fit the query, or null. Each area must be a
 * value of the query (as sent, case-insensitively) or a census GEOID inside a numeric one; each
 * provider must match at least one value of every parameter given (AND across parameters).
 */
export function matchedAreasViolation(
  geography: CoverageQuery,
  providers: ReadonlyArray<{ matched_areas: readonly string[] }>,
): string | null {
  const given = Object.entries(geography).filter(([, values]) => (values ?? []).length > 0);
  const fits = (area: string, value: string): boolean =>
    area.toUpperCase() === value.toUpperCase() ||
    (/^\d+$/.test(value) && /^\d+$/.test(area) && area.startsWith(value));
  for (const [i, provider] of providers.entries()) {
    const areas = provider.matched_areas;
    if (areas.length === 0) return `provider ${i + 1}: no matched_areas`;
    const stray = areas.find(
      (area) => !given.some(([, values]) => values?.some((v) => fits(area, v))),
    );
    if (stray !== undefined) return `provider ${i + 1}: a matched area the query did not ask for`;
    const unmatched = given.find(
      ([, values]) => !areas.some((a) => values?.some((v) => fits(a, v))),
    );
    if (unmatched !== undefined) {
      return `provider ${i + 1}: matches no value of ${unmatched[0]}[] (parameters combine with AND)`;
    }
  }
  return null;
}


/** One run: the configured geography, then the same endpoint without any. */
export async function runCoverage(ctx: Ctx): Promise<CheckOutcome<CoverageFacts>> {
  const facts: CoverageFacts = {
    result: 'ok',
    providers: null,
    matchedAreasViolation: null,
    refusalStatus: null,
  };
  const found = await queryCoverage(ctx, facts);
  if (found !== 'unauthorized' && found !== 'rate_limited') {
    const refusal = await queryWithoutGeography(ctx, facts);
    facts.result = found === 'ok' ? refusal : found;
  } else {
    facts.result = found;
  }
  return {
    outcome: facts.result === 'ok' ? 'pass' : 'fail',
    reason: facts.result === 'ok' ? null : facts.result,
    facts,
  };
}
