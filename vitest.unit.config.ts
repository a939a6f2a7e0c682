/**
 * The in-process tier (`npm run test:unit`): every test that runs in the test process alone, on
 * loopback sockets and fake clocks. Left out are the tests that start processes or real tools:
 * the daemon and CLI as child processes, Prometheus, promtool, Alertmanager, Chromium, the
 * container and Kubernetes validators, the end-to-end and chaos runs, and the timer-trace and
 * worker tests. `npm test` runs everything (vitest.config.ts), as CI does.
 */
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

/** Tests that start processes or real tools: the integration tier. */
export const INTEGRATION = [
  // A check's folder names its process-starting tests so, and they land here without a list.
  '**/*.integration.test.ts',
  'test/alerts/**',
  'test/build/**',
  'test/chaos/**',
  'test/cli/**',
  'test/daemon/**',
  'test/dashboards/prometheus.test.ts',
  'test/dashboards/promtool.test.ts',
  'test/deploy/**',
  'test/e2e/**',
  'test/web/**',
  'test/api/client-wakeups.test.ts',
  'test/limits/deadline.test.ts',
  'test/measurement/host.test.ts',
  'test/metrics/docs.test.ts',
  'test/server/prometheus-scrape.test.ts',
  'test/server/promtool.test.ts',
  'test/sessions/ledger.test.ts',
  'test/v8-tiering.test.ts',
];

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: ['**/node_modules/**', ...INTEGRATION],
      outputFile: { json: 'test-results/vitest-unit.json' },
      // One module graph per worker: the tier's time was mostly every file importing it anew.
      isolate: false,
    },
  }),
);
