/** The Grafana provisioning files in deploy/grafana are valid and fit the generated dashboards. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { committedDashboards } from './committed.js';

const PROVISIONING = path.resolve(import.meta.dirname, '../../deploy/grafana/provisioning');

function load(file: string): Record<string, unknown> {
  return parse(readFileSync(path.join(PROVISIONING, file), 'utf8')) as Record<string, unknown>;
}

describe('Grafana provisioning', () => {
  it('provides the dashboards from files, read-only', () => {
    const provider = load('dashboards/isa-monitor.yaml');
    expect(provider.apiVersion).toBe(1);
    const providers = provider.providers as Array<Record<string, unknown>>;
    expect(providers).toHaveLength(1);
    expect(providers[0]).toMatchObject({
      name: 'isa-monitor',
      type: 'file',
      allowUiUpdates: false,
      options: { path: expect.stringMatching(/^\//) as unknown },
    });
  });

  it('has an example Prometheus data source whose uid the dashboards never hard-code', () => {
    const config = load('datasources/prometheus.example.yaml');
    expect(config.apiVersion).toBe(1);
    const [datasource] = config.datasources as Array<Record<string, unknown>>;
    expect(datasource).toMatchObject({ type: 'prometheus', access: 'proxy' });
    // $__rate_interval is computed from the scrape interval given here.
    expect((datasource?.jsonData as Record<string, unknown>).timeInterval).toMatch(/^\d+s$/);
    for (const { file, dashboard } of committedDashboards()) {
      const text = JSON.stringify(dashboard);
      expect(text, file).not.toContain(`"uid":"${String(datasource?.uid)}"`);
    }
  });
});
