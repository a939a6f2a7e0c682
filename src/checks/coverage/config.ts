/**
 * The coverage check's configuration: the census geography it queries and the providers it
 * expects at least (docs/configuration.md, "coverage").
 */
import { z } from 'zod';
import { COVERAGE_PATTERNS } from './endpoint.js';
import type { Loose } from '../../config/rules.js';
import { checkSection, type CheckConfigBase } from '../../config/section.js';

/** The geographic parameters of `GET /coverage`, without `[]`, in the spec's order. */
export const GEOGRAPHY_PARAMETERS = ['states', 'counties', 'tracts', 'blocks'] as const;

export type GeographyParameter = (typeof GEOGRAPHY_PARAMETERS)[number];


/** The geography of an unconfigured check: one state, as the check's documentation says. */
export const DEFAULT_GEOGRAPHY = { states: ['CO'] } as const;


export interface CoverageConfig extends CheckConfigBase {
  geography: Partial<Record<GeographyParameter, string[]>>;
  minProviders: number;
}


const geographyValues = (parameter: GeographyParameter) =>
  z
    .array(
      z
        .string()
        .regex(COVERAGE_PATTERNS[parameter], `is not a valid ${parameter} value for GET /coverage`),
    )
    .optional();


export const section = checkSection({
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
