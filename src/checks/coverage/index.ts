/**
 * The coverage check: `GET /coverage` for the configured census geographies (each value repeated
 * as `name[]`), then the same endpoint without any geography, which the spec says the API
 * requires (a contract check: the answer must be a 4xx).
 *
 * A coverage answer passes when it matches the API's schema, every provider's `matched_areas`
 * names what the query asked for (OR within a parameter, AND across parameters: each provider
 * matched at least one value of every parameter given), and at least `min_providers` providers
 * came back.
 */
import { z } from 'zod';
import * as coverageApi from './request.js';
import type { CoverageQuery } from './request.js';
import { COVERAGE_PATTERNS, coverageResponseSchema } from '../../api/schemas.js';
import type { Loose } from '../../config/rules.js';
import { checkSection, type CheckConfigBase } from '../../config/section.js';
import { defineCheck, type CheckContext } from '../../kernel/check.js';
import { checkResponseSchema } from '../shared/contract.js';
import { REQUEST_FAILURES, requestFailure, requestOptions, initialResults } from '../shared/request.js';

/** Result of one run; the first failure wins. */
export const COVERAGE_RESULTS = [
  'ok',
  'below_expectation',
  'invalid_matched_areas',
  'geography_not_required',
  'invalid_body',
  ...REQUEST_FAILURES,
] as const;
export type CoverageResult = (typeof COVERAGE_RESULTS)[number];

/** The geographic parameters of `GET /coverage`, without `[]`, in the spec's order. */
export const GEOGRAPHY_PARAMETERS = ['states', 'counties', 'tracts', 'blocks'] as const;
export type GeographyParameter = (typeof GEOGRAPHY_PARAMETERS)[number];

/** The geography of an unconfigured check: one state, as the check's documentation says. */
export const DEFAULT_GEOGRAPHY = { states: ['CO'] } as const;

export interface CoverageConfig extends CheckConfigBase {
  geography: Partial<Record<GeographyParameter, string[]>>;
  minProviders: number;
}

export interface CoverageFacts {
  result: CoverageResult;
  /** Providers in the answer; null when no valid answer came back. */
  providers: number | null;
  /** The first provider whose matched_areas do not fit the query, by position. */
  matchedAreasViolation: string | null;
  /** HTTP status of the request without geography; null when it got no answer or was not sent. */
  refusalStatus: number | null;
}

const geographyValues = (parameter: GeographyParameter) =>
  z
    .array(
      z
        .string()
        .regex(COVERAGE_PATTERNS[parameter], `is not a valid ${parameter} value for GET /coverage`),
    )
    .optional();

const section = checkSection({
  name: 'coverage',
  // On unless configured off: two read-only requests every 15 minutes. The default expects no
  // provider count (min_providers 0): how many providers a geography has is a fact about the
  // operator's data, and an expectation nobody set would alert for nothing.
  defaults: { enabled: true, interval: '15m', timeout: '30s', requestTimeout: '10s' },
  shape: {
    states: geographyValues('states'),
    counties: geographyValues('counties'),
    tracts: geographyValues('tracts'),
    blocks: geographyValues('blocks'),
    min_providers: z.number().int().min(0).default(0),
  },
  docs: {
    summary:
      'the `GET /coverage` check: the configured geography (each value sent as `name[]=value`), `matched_areas`, the provider count, and that a request without geography is refused with a 4xx. **On by default** (see below)',
    keys: {
      timeout: { meaning: 'bounds both requests' },
      states: {
        type: 'list',
        default: `\`[${DEFAULT_GEOGRAPHY.states.join(', ')}]\` when no geography is given`,
        meaning:
          'state postal abbreviations or 2-digit FIPS codes (`^([A-Z]{2}|\\d{2})$`); values of one parameter combine with OR, parameters with AND',
      },
      counties: { type: 'list', meaning: 'county GEOIDs, `^\\d{5}$`' },
      tracts: { type: 'list', meaning: 'tract GEOIDs, `^\\d{11}$`' },
      blocks: {
        type: 'list',
        meaning:
          'block GEOIDs, `^\\d{15}$`, sent as `blocks[]` (the spec does not name the block parameter; the simulator uses `blocks[]`). A geography key given as an empty list with no other values is an error',
      },
      min_providers: {
        type: 'integer',
        meaning:
          'at least 0; a run with fewer providers fails (`below_expectation`). Exported as `isa_coverage_min_providers`',
      },
    },
  },
  refine(v: Loose, issues) {
    const given = GEOGRAPHY_PARAMETERS.filter((p) => v[p] !== undefined);
    if (
      given.length > 0 &&
      given.every((p) => Array.isArray(v[p]) && (v[p] as unknown[]).length === 0)
    ) {
      issues.addIssue({
        code: 'custom',
        path: [given[0] ?? 'states'],
        message: 'at least one of states, counties, tracts and blocks must list a value',
      });
    }
  },
  toConfig: (p) => {
    const geography: CoverageConfig['geography'] = {};
    for (const parameter of GEOGRAPHY_PARAMETERS) {
      const values = p[parameter];
      if (values !== undefined && values.length > 0) geography[parameter] = values;
    }
    return {
      geography:
        Object.keys(geography).length > 0 ? geography : { states: [...DEFAULT_GEOGRAPHY.states] },
      minProviders: p.min_providers,
    };
  },
});

const metrics = {
  coverageRuns: {
    name: 'isa_coverage_runs_total',
    help: 'Coverage checks by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(COVERAGE_RESULTS) },
  },
  coverageProviders: {
    name: 'isa_coverage_providers',
    help: 'Providers in the latest valid GET /coverage answer for the configured geography.',
    type: 'gauge',
    labels: ['environment'],
  },
  coverageMinProviders: {
    name: 'isa_coverage_min_providers',
    help: 'Configured least number of providers the coverage answer must hold.',
    type: 'gauge',
    labels: ['environment'],
  },
} as const;

type Ctx = CheckContext<CoverageConfig>;

export const coverageCheck = defineCheck({
  name: 'coverage',
  config: section,
  metrics,
  operations: ['coverage', 'coverage_no_geography'],
  contractChecks: ['response_schema', 'matched_areas', 'geography_required'],
  summaryKeys: ['providers'],
  async run(ctx: Ctx) {
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
  },
  summary: (facts) => ({
    providers: facts?.providers === null || facts === null ? null : String(facts.providers),
  }),
  trace: (facts) => {
    if (!facts) return [];
    const lines: string[] = [];
    if (facts.providers !== null) lines.push(`providers ${facts.providers}`);
    if (facts.matchedAreasViolation) lines.push(`matched_areas: ${facts.matchedAreasViolation}`);
    if (facts.refusalStatus !== null) lines.push(`without geography: HTTP ${facts.refusalStatus}`);
    return lines;
  },
  record(facts, sink) {
    sink.inc(metrics.coverageRuns, { result: facts.result });
    if (facts.providers !== null) sink.set(metrics.coverageProviders, {}, facts.providers);
  },
  describeConfig(config, _environment, sink) {
    sink.set(metrics.coverageMinProviders, {}, config.minProviders);
  },
});

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
