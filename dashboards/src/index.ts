/**
 * The dashboards this repository ships: one entry per committed `dashboards/<file>.json`, and the
 * one function that turns a dashboard object into the committed text.
 */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import * as prettier from 'prettier';
import { buildOverviewDashboard } from './overview.js';

/** A dashboard and the file (under `dashboards/`) its JSON is committed to. */
export interface DashboardSource {
  file: string;
  build: () => Dashboard;
}

/** Every generated dashboard. Add a dashboard here and run the generator. */
export const DASHBOARDS: readonly DashboardSource[] = [
  { file: 'isa-monitor-overview.json', build: buildOverviewDashboard },
];

/** The `dashboards/` directory, where the generated JSON files live. */
export const DASHBOARDS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Serialises a dashboard exactly as it is committed: JSON formatted by the repository's Prettier
 * configuration (so `prettier --check .` agrees), ending with a newline.
 */
export async function renderDashboardJson(dashboard: Dashboard, file: string): Promise<string> {
  const filepath = path.join(DASHBOARDS_DIR, file);
  const options = (await prettier.resolveConfig(filepath)) ?? {};
  return prettier.format(JSON.stringify(dashboard), { ...options, filepath });
}

/** Builds and renders every dashboard, in memory: `[{ file, text }]`. */
export async function renderAllDashboards(): Promise<Array<{ file: string; text: string }>> {
  return Promise.all(
    DASHBOARDS.map(async ({ file, build }) => ({
      file,
      text: await renderDashboardJson(build(), file),
    })),
  );
}
