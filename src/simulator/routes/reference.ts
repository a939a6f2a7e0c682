/**
 * The endpoints that read reference data: the health check, the tracked provider list and
 * provider coverage by census geography.
 */
import express, { type Request, type Response, type Router } from 'express';
import {
  COVERAGE_PATTERNS,
  coverageResponseSchema,
  pingResponseSchema,
  serviceProvidersResponseSchema,
} from '../schemas.js';
import { coverageProviderInfo, PROVIDER_COVERAGE, serviceProviderList } from '../catalog.js';
import type { CoverageChange, ProviderListChange } from '../faults.js';
import { postalForStateParam, fipsForPostal } from '../geography.js';
import { ctx, queryArray, sendError, sendValid } from '../http.js';
import { serviceDataSetFor } from '../state.js';

const GEO_PARAMS = ['states', 'counties', 'tracts', 'blocks'] as const;
type GeoParam = (typeof GEO_PARAMS)[number];
/** Length of the GEOID prefix each parameter compares against a block GEOID. */
const PREFIX_LENGTH: Record<GeoParam, number> = { states: 2, counties: 5, tracts: 11, blocks: 15 };
const SINGULAR: Record<GeoParam, string> = {
  states: 'state',
  counties: 'county',
  tracts: 'tract',
  blocks: 'block',
};

/** The reference routes. */
export function referenceRoutes(now: () => number): Router {
  const router = express.Router();

  router.get('/ping', (_req, res) => {
    sendValid(res, 200, pingResponseSchema, {
      message: 'pong',
      timestamp: new Date(now()).toISOString(),
    });
  });

  router.get('/service_providers', (_req, res) => {
    const fault = ctx(res).faults?.take('provider_list') ?? null;
    const providers = fault ? changedProviderList(fault.change) : serviceProviderList();
    sendValid(res, 200, serviceProvidersResponseSchema, { providers });
  });

  router.get('/coverage', (req, res) => sendCoverage(now, req, res));

  return router;
}

type GeoQuery = Record<GeoParam, string[]>;

/** GET /coverage: 400 without geography (unless a fault allows it) or with an invalid code. */
function sendCoverage(now: () => number, req: Request, res: Response): void {
  const query = Object.fromEntries(GEO_PARAMS.map((p) => [p, queryArray(req, p)])) as GeoQuery;
  const noGeography = GEO_PARAMS.every((p) => query[p].length === 0);
  // A fault is used up only by a request it changes: `geography_optional` by one without
  // geography, the others by one with.
  const fault =
    ctx(res).faults?.take('coverage', (f) => (f.change === 'geography_optional') === noGeography) ??
    null;
  if (noGeography && fault === null) {
    sendError(
      res,
      400,
      'At least one geographic parameter is required: states[], counties[], tracts[] or blocks[]',
    );
    return;
  }
  const errors = geographyErrors(query);
  if (Object.keys(errors).length > 0) {
    sendError(res, 400, 'Invalid geographic parameter', { errors });
    return;
  }
  const given = GEO_PARAMS.filter((p) => query[p].length > 0);
  const covering = coveringProviders(query, given);
  const data = fault ? changedCoverage(fault.change, covering) : covering;
  const summary = given.map((p) => `${p}=${query[p].join('|')}`).join(' AND ');
  sendValid(res, 200, coverageResponseSchema, {
    message: `${data.length} provider${data.length === 1 ? '' : 's'} cover ${summary}`,
    request_status: 'ok',
    data,
    meta: {
      responded_at: new Date(now()).toISOString(),
      service_data_set: serviceDataSetFor(ctx(res).environment),
      provider_count: data.length,
      query: Object.fromEntries(given.map((p) => [p, query[p]])),
    },
  });
}

/** Each invalid geographic code, under the parameter that carried it. */
function geographyErrors(query: GeoQuery): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const p of GEO_PARAMS) {
    for (const v of query[p]) {
      const valid =
        COVERAGE_PATTERNS[p].test(v) && (p !== 'states' || postalForStateParam(v) !== null);
      if (!valid)
        (errors[`${p}[]`] ??= []).push(`${JSON.stringify(v)} is not a valid ${SINGULAR[p]} code`);
    }
  }
  return errors;
}

/** The providers covering a block the query selects, each with the query values it matched. */
function coveringProviders(query: GeoQuery, given: GeoParam[]) {
  // Compare everything as GEOID prefixes: a state as its FIPS code.
  const codes: GeoQuery = {
    ...query,
    states: query.states.map((s) => {
      const postal = postalForStateParam(s);
      return postal ? fipsForPostal(postal) : s;
    }),
  };
  // A block matches when it satisfies every given parameter (AND) through any of its values (OR).
  const blockMatches = (block: string): boolean =>
    given.every((p) => codes[p].includes(block.slice(0, PREFIX_LENGTH[p])));

  return PROVIDER_COVERAGE.flatMap(({ providerId, blocks }) => {
    const matching = blocks.filter(blockMatches);
    if (matching.length === 0) return [];
    // The query values this provider's coverage satisfied, as the client sent them.
    const matchedAreas = given.flatMap((p) =>
      query[p].filter((_v, i) =>
        matching.some((b) => b.slice(0, PREFIX_LENGTH[p]) === codes[p][i]),
      ),
    );
    return [{ ...coverageProviderInfo(providerId), matched_areas: [...new Set(matchedAreas)] }];
  });
}

type ProviderRecord = ReturnType<typeof serviceProviderList>[number];

/** The provider list as a `provider_list` fault changes it (see `PROVIDER_LIST_CHANGES`). */
export function changedProviderList(change: ProviderListChange): ProviderRecord[] {
  const list = serviceProviderList();
  // Each parent with the brands right after it, in list order.
  const groups: ProviderRecord[][] = [];
  for (const record of list) {
    if (record.type === 'fcc_provider' || groups.length === 0) groups.push([record]);
    else groups[groups.length - 1]?.push(record);
  }
  switch (change) {
    case 'empty':
      return [];
    case 'shrink':
      return groups.slice(0, Math.ceil(groups.length / 2)).flat();
    case 'misordered': {
      // The two largest parents trade places: units rise from the first group to the second.
      const [first, second, ...others] = groups;
      return [second ?? [], first ?? [], ...others].flat();
    }
    case 'brand_detached': {
      // The first brand moves to the end of the list, away from its parent.
      const brand = list.find((p) => p.type === 'supplemental_brand');
      return brand ? [...list.filter((p) => p !== brand), brand] : list;
    }
    case 'added':
      // A new, small provider at the end: the order still holds, the content changed.
      return [
        ...list,
        {
          id: '109999',
          name: 'Prairie Fiber Co-op',
          fcc_name: 'Prairie Fiber Cooperative',
          total_residential_units: 1,
          type: 'fcc_provider',
        },
      ];
  }
}

type CoverageRecord = { matched_areas: string[] };

/** A coverage answer as a `coverage` fault changes it (see `COVERAGE_CHANGES`). */
function changedCoverage<T extends CoverageRecord>(change: CoverageChange, data: T[]): T[] {
  if (change === 'empty') return [];
  if (change === 'foreign_areas') {
    return data.map((p) => ({ ...p, matched_areas: [...p.matched_areas, '99'] }));
  }
  return data;
}
