/**
 * The coverage check's row of the overview dashboard (docs/dashboards.md, "Where the rows come
 * from"): dashboards/src/overview.ts finds `dashboardRows` by the check's name in the registry and
 * places the rows in registry order (reference rows). Design-time only, like every `dashboard.ts`
 * (src/checks/shared/dashboard.ts): nothing the daemon runs imports it.
 */
import { COLORS, fixedColor } from '../../dashboard-kit/panels.js';
import { select } from '../../dashboard-kit/promql.js';
import {
  heldCountPanel,
  referenceDataHalf,
  runsByResultPanel,
  type CheckRow,
  type CheckRows,
} from '../shared/dashboard.js';
import { coverageCheck } from './index.js';

const BY_ENV = 'environment';
const { metrics } = coverageCheck;

/** Coverage's half of the reference-data row, beside the provider list's. */
export const dashboardRows: CheckRows = () => [coverageRow()];

function coverageRow(): CheckRow {
  const coverageCount = heldCountPanel({
    title: 'Providers covering the monitored geography',
    description:
      'Providers in the latest valid GET /coverage answer for the configured geography (coverage.states, counties, tracts, blocks), with the configured least number (coverage.min_providers) dashed. Below the line the coverage check fails with below_expectation.',
    unit: 'short',
    queries: [
      {
        expr: `max by (${BY_ENV}) (${select(metrics.coverageProviders)})`,
        legend: '{{environment}}',
      },
      {
        expr: `max by (${BY_ENV}) (${select(metrics.coverageMinProviders)})`,
        legend: '{{environment}} expected at least',
      },
    ],
  }).overrideByRegexp(' expected at least$', fixedColor(COLORS.neutral));

  const coverageRuns = runsByResultPanel({
    title: 'Coverage checks by result',
    description:
      'Coverage runs per time slot, by result. ok is the only good one; below_expectation, invalid_matched_areas (matched_areas that do not fit the query: OR within a parameter, AND across), geography_not_required (a request without geography was not refused) and invalid_body are wrong answers (IsaCoverageAnswersWrong); the rest are failed requests.',
    minInterval: '15m',
    runs: metrics.coverageRuns,
    good: 'ok',
  });

  return referenceDataHalf(coverageCount, coverageRuns);
}
