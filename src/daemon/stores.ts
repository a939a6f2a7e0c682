/**
 * The main thread's stores, fed by the measurement engine's events: the metrics registry and its
 * recorder, the maintenance watcher, the status and run histories, and the 90-day uptime record.
 * They are built from the configuration in force (`DaemonState`), which a reload replaces.
 */
import type { Logger } from 'pino';
import type { AnyCheck } from '../kernel/check.js';
import { sectionOf, type EnvironmentConfig, type MonitorConfig } from '../config/index.js';
import { MaintenanceWatcher } from '../maintenance/watcher.js';
import { Recorder } from '../metrics/recorder.js';
import {
  createMetrics,
  metricsEnvironmentOf,
  type BuildInfo,
  type Metrics,
  type MetricsEnvironment,
} from '../metrics/registry.js';
import { RunHistory, type HistoryEnvironment } from '../server/history.js';
import { StatusHistory } from '../server/status.js';
import { UptimeStore, uptimeStorePath } from '../server/uptime-store.js';

/** The configuration in force and what the main thread keeps of it; a reload replaces them. */
export interface DaemonState {
  config: MonitorConfig;
  /** Its environments: events of one a reload removed (its last runs) are logged, not recorded. */
  configured: ReadonlySet<string>;
  /** The registry's view of the environments, kept for the next reload to compare against. */
  metricsEnvironments: MetricsEnvironment[];
  /** Whether /readyz says ready: from the engine's start to a stop or the engine's death. */
  ready: boolean;
}

/** The state of a daemon starting with `config`: not ready yet. */
export function initialState(config: MonitorConfig, checks: readonly AnyCheck[]): DaemonState {
  return {
    config,
    configured: configuredNames(config),
    metricsEnvironments: config.environments.map((env) => metricsEnvironmentOf(env, checks)),
    ready: false,
  };
}

/** The names of the environments `config` configures. */
export function configuredNames(config: MonitorConfig): ReadonlySet<string> {
  return new Set(config.environments.map((env) => env.name));
}

/** What the engine's events are recorded in. */
export interface DaemonStores {
  metrics: Metrics;
  recorder: Recorder;
  maintenance: MaintenanceWatcher;
  status: StatusHistory;
  history: RunHistory;
  uptime: UptimeStore;
}

/**
 * Opens the 90-day record beside the session ledger (docs/configuration.md, "The uptime record"):
 * only this thread writes it, at most once a minute and at shutdown. Read before the measurement
 * thread starts, so that its first events find the record open.
 */
export async function openUptimeRecord(
  checks: readonly AnyCheck[],
  state: DaemonState,
  logger: Logger,
  inMaintenance: (environment: string) => boolean,
): Promise<UptimeStore> {
  const uptime = await UptimeStore.open({
    path: uptimeStorePath(state.config.stateFile),
    checks,
    inMaintenance,
    // One line when writes start failing and one when they work again (docs/configuration.md).
    onWriteError: (err) =>
      logger.warn(
        {
          code: (err as NodeJS.ErrnoException).code,
          file: uptimeStorePath(state.config.stateFile),
        },
        'uptime record not written; kept in memory and tried again every minute',
      ),
    onWriteRecovered: () =>
      logger.info({ file: uptimeStorePath(state.config.stateFile) }, 'uptime record written again'),
  });
  if (uptime.recovered !== null) {
    logger.warn({ detail: uptime.recovered }, 'uptime record unreadable; starting a new one');
  }
  return uptime;
}

/** The registry, its recorder, the maintenance watcher and the histories, beside `uptime`. */
export function createStores(
  opts: { checks: readonly AnyCheck[]; build: BuildInfo; logger: Logger },
  state: DaemonState,
  uptime: UptimeStore,
): DaemonStores {
  const { config } = state;
  const metrics = createMetrics({
    checks: opts.checks,
    environments: state.metricsEnvironments,
    build: opts.build,
    location: config.location ?? null,
    control: (config.control ?? null) !== null,
  });
  const recorder = new Recorder(metrics);
  for (const env of config.environments) recorder.describeEnvironment(env);
  const maintenance = maintenanceWatcher(state, recorder, opts.logger);
  const status = new StatusHistory({
    checks: opts.checks,
    environments: config.environments.map((e) => e.name),
    maintenance: (environment) => maintenance.status(environment),
  });
  const history = new RunHistory({
    checks: opts.checks,
    maintenance: (environment) => maintenance.status(environment),
    windowMs: config.history.windowMs,
    runs: config.history.runs,
    environments: historyEnvironments(config.environments, opts.checks),
  });
  return { metrics, recorder, maintenance, status, history, uptime };
}

/**
 * Windows are configuration: this thread evaluates them at their edges (maintenance/watcher.ts),
 * sets `isa_maintenance_active` and logs each edge.
 */
function maintenanceWatcher(
  state: DaemonState,
  recorder: Recorder,
  logger: Logger,
): MaintenanceWatcher {
  return new MaintenanceWatcher({
    environments: state.config.environments,
    onChange: (environment, active) => {
      recorder.setMaintenanceActive(environment, active);
      // Not at start for environments without windows: nothing to say about them.
      const windows = state.config.environments.find((e) => e.name === environment)?.maintenance;
      if (active || (windows ?? []).length > 0) {
        logger.info(
          { environment, active },
          active ? 'maintenance window started' : 'outside maintenance windows',
        );
      }
    },
  });
}

/** The run history's view of the environments: thresholds and each check's interval. */
export function historyEnvironments(
  environments: readonly EnvironmentConfig[],
  checks: readonly AnyCheck[],
): HistoryEnvironment[] {
  return environments.map((env) => ({
    name: env.name,
    thresholds: env.thresholds,
    checks: checks.map((check) => {
      const section = sectionOf(env, check);
      return { name: check.name, enabled: section.enabled, intervalMs: section.intervalMs };
    }),
  }));
}

/** Closes what the stores hold open: the watcher's timers and the uptime record (written last). */
export async function closeStores(stores: DaemonStores): Promise<void> {
  await stores.uptime.close().catch(() => undefined);
  stores.maintenance.stop();
}
