/**
 * A reloaded configuration put in force on the main thread (docs/configuration.md, "Reload"): the
 * registry, the stores and then the measurement engine take it; the keys fixed at start keep
 * their running values, and the reload metrics and one log line say what changed.
 */
import type { Logger } from 'pino';
import type { AnyCheck } from '../kernel/check.js';
import type { MonitorConfig } from '../config/index.js';
import { planReload } from '../config/reload.js';
import type { MeasurementHost } from '../measurement/host.js';
import { reconfigureMetrics } from '../metrics/reconfigure.js';
import { metricsEnvironmentOf } from '../metrics/registry.js';
import {
  configuredNames,
  historyEnvironments,
  type DaemonState,
  type DaemonStores,
} from './stores.js';

/** What a reload changes: the state, the stores and the engine. */
export interface ReloadTarget {
  checks: readonly AnyCheck[];
  state: DaemonState;
  stores: DaemonStores;
  measurement: MeasurementHost;
  logger: Logger;
}

/** Puts `loaded` in force, but for the keys that cannot change without a restart. */
export async function applyReload(loaded: MonitorConfig, target: ReloadTarget): Promise<void> {
  const { state, stores, logger } = target;
  const began = performance.now();
  const plan = planReload(state.config, loaded);
  for (const key of plan.kept) {
    logger.warn(
      { key },
      `configuration reload: ${key} cannot change without a restart; the running value stays`,
    );
  }
  state.config = plan.config;
  state.configured = configuredNames(state.config);
  logger.level = state.config.logLevel;
  const rebuilt = await reconfigureStores(target);
  const report = await target.measurement.reload(state.config);
  stores.metrics.configLastReloadSuccessful.set(1);
  stores.metrics.configLastReloadSuccessTimestamp.set(Math.floor(Date.now() / 1000));
  logger.info(
    {
      added: report.added,
      changed: report.changed,
      removed: report.removed,
      unchanged: report.unchanged.length,
      ...(plan.kept.length > 0 ? { kept: plan.kept } : {}),
      ...(rebuilt.length > 0 ? { histogramsRestarted: rebuilt } : {}),
      durationMs: Math.round(performance.now() - began),
      schedule: report.schedule,
    },
    'configuration reloaded',
  );
}

/**
 * The registry and the stores take the configuration in force, before the engine does: the
 * measurement thread's first events under it find their series. Returns the histograms the
 * registry had to restart.
 */
async function reconfigureStores({ checks, state, stores }: ReloadTarget): Promise<string[]> {
  const { config } = state;
  const nextMetricsEnvironments = config.environments.map((env) =>
    metricsEnvironmentOf(env, checks),
  );
  const { rebuilt } = await reconfigureMetrics(stores.metrics, {
    checks,
    previous: state.metricsEnvironments,
    next: nextMetricsEnvironments,
  });
  state.metricsEnvironments = nextMetricsEnvironments;
  stores.recorder.bind();
  for (const env of config.environments) stores.recorder.describeEnvironment(env);
  stores.maintenance.update(config.environments);
  stores.status.setEnvironments(config.environments.map((env) => env.name));
  stores.history.setEnvironments(historyEnvironments(config.environments, checks));
  return rebuilt;
}
