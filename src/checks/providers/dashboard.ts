/**
 * The providers check's row of the overview dashboard (docs/dashboards.md, "Where the rows come
 * from"): dashboards/src/overview.ts finds `dashboardRows` by the check's name in the registry and
 * places the rows in registry order (reference rows). Design-time only, like every `dashboard.ts`
 * (src/checks/shared/dashboard.ts): nothing the daemon runs imports it.
 */
import { countBarsPanel } from '../../dashboard-kit/panels.js';
import { VARIABLES, increase, select } from '../../dashboard-kit/promql.js';
import {
  heldCountPanel,
  referenceDataHalf,
  type CheckRow,
  type CheckRows,
} from '../shared/dashboard.js';
import { providersCheck } from './index.js';

const { interval } = VARIABLES;
const BY_ENV = 'environment';
const { metrics } = providersCheck;

/** The provider list's half of the reference-data row (coverage has the other half). */
export const dashboardRows: CheckRows = () => [providersRow()];

function providersRow(): CheckRow {
  const listed = heldCountPanel({
    title: 'Providers listed',
    description:
      'Providers in the latest valid GET /service_providers answer, by record type (fcc_provider, supplemental_brand). Fetched every 15 minutes by default and held until the next fetch. An empty list, or one that lost more than 20 % of the largest list of the last 6 hours, is IsaProviderListShrank.',
    unit: 'short',
    queries: [
      {
        expr: `sum by (${BY_ENV}, type) (${select(metrics.providersListed)})`,
        legend: '{{environment}} {{type}}',
      },
    ],
  });

  const listChanges = countBarsPanel({
    title: 'Provider list changes and checks',
    description:
      'Fetches whose provider list differed from the previous valid one (content or order), and provider-list checks that failed, by result: empty, order_violation (the spec promises units descending and each supplemental brand right after its parent), invalid_body, or a failed request.',
    unit: 'short',
    minInterval: '15m',
    queries: [
      {
        expr: `sum by (${BY_ENV}) (${increase(select(metrics.providersListChanges), interval)})`,
        legend: '{{environment}} list changed',
      },
      {
        expr: `sum by (${BY_ENV}, result) (${increase(select(metrics.providersRuns, { result: { not: 'ok' } }), interval)})`,
        legend: '{{environment}} {{result}}',
      },
    ],
  }).axisLabel('per slot');

  return referenceDataHalf(listed, listChanges);
}
