/** What a coverage run finds: its bounded results and its facts. */
import { REQUEST_FAILURES } from '../shared/request.js';

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


export interface CoverageFacts {
  result: CoverageResult;
  /** Providers in the answer; null when no valid answer came back. */
  providers: number | null;
  /** The first provider whose matched_areas do not fit the query, by position. */
  matchedAreasViolation: string | null;
  /** HTTP status of the request without geography; null when it got no answer or was not sent. */
  refusalStatus: number | null;
}
