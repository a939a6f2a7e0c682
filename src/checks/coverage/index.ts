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
import { COVERAGE_OPERATIONS } from './endpoint.js';
import { defineCheck } from '../../kernel/check.js';
import { section } from './config.js';
import { metrics, recordCoverage, describeCoverage } from './metrics.js';
import { runCoverage } from './run.js';
import { coverageSummary, coverageTrace } from './presentation.js';

export { COVERAGE_RESULTS, type CoverageResult, type CoverageFacts } from './facts.js';
export { GEOGRAPHY_PARAMETERS, type GeographyParameter, DEFAULT_GEOGRAPHY, type CoverageConfig } from './config.js';
export { matchedAreasViolation } from './run.js';

export const coverageCheck = defineCheck({
  name: 'coverage',
  config: section,
  metrics,
  operations: COVERAGE_OPERATIONS,
  contractChecks: ['response_schema', 'matched_areas', 'geography_required'],
  summaryKeys: ['providers'],
  run: runCoverage,
  summary: coverageSummary,
  trace: coverageTrace,
  record: recordCoverage,
  describeConfig: describeCoverage,
});
