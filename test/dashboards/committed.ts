/** Loads the committed dashboard JSON files: what Grafana provisioning actually serves. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { DASHBOARDS, DASHBOARDS_DIR } from '../../dashboards/src/index.js';

export interface CommittedDashboard {
  file: string;
  dashboard: Dashboard;
}

/** Every dashboard listed in the registry, parsed from its committed file. */
export function committedDashboards(): CommittedDashboard[] {
  return DASHBOARDS.map(({ file }) => ({
    file,
    dashboard: JSON.parse(readFileSync(path.join(DASHBOARDS_DIR, file), 'utf8')) as Dashboard,
  }));
}
