/**
 * The tls check's row of the overview dashboard (docs/dashboards.md, "Where the rows come from"):
 * dashboards/src/overview.ts finds `dashboardRows` by the check's name in the registry and places
 * the rows in registry order (reference rows). Design-time only, like every `dashboard.ts`
 * (src/checks/shared/dashboard.ts): nothing the daemon runs imports it.
 */
import { countBarsPanel, linePanel } from '../../dashboard-kit/panels.js';
import { VARIABLES, increase, select } from '../../dashboard-kit/promql.js';
import { heldCountPanel, type CheckRow, type CheckRows } from '../shared/dashboard.js';
import { tlsCheck } from './index.js';

const { interval } = VARIABLES;
const BY_ENV = 'environment';
const { metrics } = tlsCheck;

/** The tls check's row: the certificate its environments' base URLs present. */
export const dashboardRows: CheckRows = () => [certificatesRow()];

function certificatesRow(): CheckRow {
  const daysLeft = linePanel({
    title: 'Certificate days left',
    description:
      "Days until the earliest notAfter of the certificate chain each environment's base URL presents, read by the hourly tls check, also when the chain does not verify. Under 21 days opens IsaTlsCertificateExpiring; under 3 in production pages (IsaTlsCertificateInvalid).",
    unit: 'short',
    queries: [
      {
        expr: `min by (${BY_ENV}) (${select(metrics.tlsExpiry)} - time()) / 86400`,
        legend: '{{environment}}',
      },
    ],
  })
    .axisLabel('days')
    .decimals(1);

  const verified = heldCountPanel({
    title: 'Certificate chain verified',
    description:
      "1 when the chain verified against the system CAs plus the environment's ca_file and matched the host name, 0 when not: then IsaTlsCertificateInvalid pages for production after 10 minutes.",
    unit: 'short',
    queries: [
      {
        expr: `min by (${BY_ENV}) (${select(metrics.tlsVerified)})`,
        legend: '{{environment}}',
      },
    ],
  }).max(1);

  const results = countBarsPanel({
    title: 'Certificate checks that did not pass',
    description:
      'tls check runs by result other than ok: expired, hostname_mismatch, untrusted, expiring (fewer than tls.min_days left), and, without a chain, handshake_failed, network_error, timeout.',
    unit: 'short',
    minInterval: '1h',
    queries: [
      {
        expr: `sum by (${BY_ENV}, result) (${increase(select(metrics.tlsRuns, { result: { not: 'ok' } }), interval)})`,
        legend: '{{environment}} {{result}}',
      },
    ],
  }).axisLabel('runs per slot');

  return {
    place: 'reference',
    title: 'Certificates',
    lines: [
      {
        height: 8,
        panels: [
          { panel: daysLeft, width: 8 },
          { panel: verified, width: 8 },
          { panel: results, width: 8 },
        ],
      },
    ],
  };
}
