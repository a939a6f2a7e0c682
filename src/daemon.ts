/**
 * The daemon's main thread: metrics registry, status history, HTTP server and logs. The checks run
 * in the measurement worker and report here as events; this thread turns them into metrics, status
 * and one log line per run.
 */
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { AnyCheck, CheckResult } from './kernel/check.js';
import { sectionOf, type EnvironmentConfig, type MonitorConfig } from './config/index.js';
import { planReload } from './config/reload.js';
import {
  startMeasurement,
  type MeasurementHost,
  type MeasurementMode,
} from './measurement/host.js';
import type { MeasurementEvent } from './measurement/messages.js';
import { reconfigureMetrics } from './metrics/reconfigure.js';
import { Recorder } from './metrics/recorder.js';
import { createMetrics, metricsEnvironmentOf, type BuildInfo } from './metrics/registry.js';
import { MaintenanceWatcher } from './maintenance/watcher.js';
import { createServerApp } from './server/app.js';
import { RunHistory } from './server/history.js';
import { listenBounded, type BoundedServer } from './server/listen.js';
import { StatusHistory } from './server/status.js';
import { UptimeStore, uptimeStorePath } from './server/uptime-store.js';
import { webDoorWiring, type WebDoorOptions } from './server/web-door.js';

export interface DaemonOptions {
  /** The checks of this build, from the composition root (`checks/index.ts`). */
  checks: readonly AnyCheck[];
  config: MonitorConfig;
  logger: Logger;
  build: BuildInfo;
  /** `worker` (default) keeps measurements off this thread; `inline` is for tests. */
  measurement?: MeasurementMode;
  /** Replaces the worker's entry module (tests of a failing worker). */
  workerEntry?: URL;
  /** `--web.config.file` and `--web.enable-lifecycle` (server/web-door.ts). */
  web?: WebDoorOptions;
}

export interface Daemon {
  /** Base URL of the metrics/status server. */
  url: string;
  /**
   * Resolves with a reason if the measurement engine dies while running (a crashed worker):
   * a monitor that keeps serving metrics but no longer measures must not look healthy.
   */
  failed: Promise<string>;
  /**
   * Puts a reloaded configuration in force (docs/configuration.md, "Reload"): the keys fixed at
   * start keep their running values (logged), everything else takes effect, and the reload
   * metrics say so. Reloads run one at a time, in the order asked.
   */
  reload(loaded: MonitorConfig): Promise<void>;
  /** A reload was refused (an invalid file): the configuration in force stays. */
  reloadRefused(): void;
  /** Graceful stop: readiness off, runs finished or aborted, sessions closed, server closed. */
  stop(): Promise<void>;
}

/**
 * Starts the measurement engine and, meanwhile, the registry and the server; resolves once both
 * run and the schedules are started.
 */
export async function startDaemon(opts: DaemonOptions): Promise<Daemon> {
  const { logger } = opts;
  /** The configuration in force: a reload replaces it. */
  let config = opts.config;
  /** Its environments: events of one a reload removed (its last runs) are logged, not recorded. */
  let configured = new Set(config.environments.map((env) => env.name));
  // The 90-day record beside the session ledger (docs/configuration.md, "The uptime record"):
  // only this thread writes it, at most once a minute and at shutdown. Read before the
  // measurement thread starts: its first events find the record open.
  const uptime = await UptimeStore.open({
    path: uptimeStorePath(config.stateFile),
    checks: opts.checks,
    inMaintenance: (environment) => maintenance.isActive(environment),
    // One line when writes start failing and one when they work again (docs/configuration.md).
    onWriteError: (err) =>
      logger.warn(
        { code: (err as NodeJS.ErrnoException).code, file: uptimeStorePath(config.stateFile) },
        'uptime record not written; kept in memory and tried again every minute',
      ),
    onWriteRecovered: () =>
      logger.info({ file: uptimeStorePath(config.stateFile) }, 'uptime record written again'),
  });
  if (uptime.recovered !== null) {
    logger.warn({ detail: uptime.recovered }, 'uptime record unreadable; starting a new one');
  }
  // The measurement thread starts first: its start-up (modules, environments, one cron task per
  // interval) runs on the other core while this thread builds the registry and binds the server.
  // Its events wait for `deliver`, which is set below, before this function first yields, so none
  // can arrive early.
  let deliver: (event: MeasurementEvent) => void = () => {};
  const measurementStarted = startMeasurement(
    { config, userAgent: `isa-monitor/${opts.build.version}` },
    (event) => deliver(event),
    opts.measurement === 'inline'
      ? { mode: 'inline', checks: opts.checks }
      : { mode: 'worker', entry: opts.workerEntry },
  );
  // Awaited below; until then a failed start must not count as an unhandled rejection.
  measurementStarted.catch(() => {});
  // The registry's view of the environments, kept for the next reload to compare against.
  let metricsEnvironments = config.environments.map((env) =>
    metricsEnvironmentOf(env, opts.checks),
  );
  const metrics = createMetrics({
    checks: opts.checks,
    environments: metricsEnvironments,
    build: opts.build,
    location: config.location ?? null,
    control: (config.control ?? null) !== null,
  });
  const recorder = new Recorder(metrics);
  for (const env of config.environments) recorder.describeEnvironment(env);
  // Windows are configuration: this thread evaluates them at their edges (maintenance/watcher.ts).
  const maintenance = new MaintenanceWatcher({
    environments: config.environments,
    onChange: (environment, active) => {
      recorder.setMaintenanceActive(environment, active);
      // Not at start for environments without windows: nothing to say about them.
      if (
        active ||
        (config.environments.find((e) => e.name === environment)?.maintenance ?? []).length > 0
      ) {
        logger.info(
          { environment, active },
          active ? 'maintenance window started' : 'outside maintenance windows',
        );
      }
    },
  });
  const status = new StatusHistory({
    checks: opts.checks,
    environments: config.environments.map((e) => e.name),
    maintenance: (environment) => maintenance.status(environment),
  });
  const historyEnvironments = (environments: readonly EnvironmentConfig[]) =>
    environments.map((env) => ({
      name: env.name,
      thresholds: env.thresholds,
      checks: opts.checks.map((check) => {
        const section = sectionOf(env, check);
        return { name: check.name, enabled: section.enabled, intervalMs: section.intervalMs };
      }),
    }));
  const history = new RunHistory({
    checks: opts.checks,
    maintenance: (environment) => maintenance.status(environment),
    windowMs: config.history.windowMs,
    runs: config.history.runs,
    environments: historyEnvironments(config.environments),
  });
  const webDoor = webDoorWiring(opts.web, logger);
  const availabilityCheck = opts.checks.find((check) => check.availability !== undefined);
  let ready = false;
  let fail: (reason: string) => void = () => {};
  const failed = new Promise<string>((resolve) => (fail = resolve));
  const app = createServerApp({
    registry: metrics.registry,
    status,
    history,
    uptime: {
      store: uptime,
      // The configuration in force: a reload adds and removes environments here too.
      environments: () =>
        config.environments.map((env) => {
          const section = availabilityCheck ? sectionOf(env, availabilityCheck) : null;
          return { name: env.name, intervalMs: section?.enabled ? section.intervalMs : 0 };
        }),
      inMaintenance: (environment) => maintenance.isActive(environment),
    },
    isReady: () => ready,
    logger,
    ...webDoor.app,
  });
  const onEvent = (event: MeasurementEvent): void => {
    if (fromRemovedEnvironment(event, configured)) {
      if (event.type === 'result') logRun(logger, event.result);
      return;
    }
    switch (event.type) {
      case 'result':
        recorder.recordResult(event.result);
        logRun(logger, event.result);
        // The status page and its history show scheduled runs; follow-ups are in their metrics.
        if (event.result.followUp === true) break;
        status.add(event.result);
        history.add(event.result);
        uptime.record(event.result);
        break;
      case 'follow_up':
        recorder.recordFollowUp(event.environment, event.check, event.event);
        logger.info(
          {
            environment: event.environment,
            check: event.check,
            ...(event.event.type === 'ended' ? { end: event.event.end } : {}),
          },
          `${event.check} follow-up runs ${event.event.type}`,
        );
        break;
      case 'control':
        recorder.recordControlProbe(event.result, event.durationMs);
        break;
      case 'skip':
        recorder.recordSkip(event.environment, event.check, event.reason);
        logger.info(
          { environment: event.environment, check: event.check, reason: event.reason },
          'check run skipped',
        );
        break;
      case 'abandoned':
        // Logged where it happened, on the measurement thread.
        recorder.recordAbandoned(event.environment, event.check);
        break;
      case 'sessions_open':
        // A removed environment's series lives while the ledger holds its sessions.
        if (!configured.has(event.environment) && event.count === 0)
          recorder.forgetSessionsOpen(event.environment);
        else recorder.setSessionsOpen(event.environment, event.count);
        history.setSessionsOpen(event.environment, event.count);
        break;
      case 'session_unrecoverable':
        recorder.recordUnrecoverable(event.environment);
        break;
      case 'ledger_writable':
        recorder.setLedgerWritable(event.writable);
        break;
      case 'lag':
        recorder.recordMeasurementLag(event.samplesMs);
        break;
      case 'contract_drift':
        recorder.setContractDrift(event.report);
        status.setContractDrift(event.report);
        break;
      case 'log':
        logger[event.level](event.fields, event.msg);
        break;
      case 'ready':
        logger.info(
          { schedule: event.schedule, leftoverSessions: event.leftoverSessions },
          'schedules started',
        );
        break;
      case 'fatal':
        logger.error({ detail: event.message }, 'measurement engine failed');
        ready = false;
        fail(event.message);
        break;
      case 'reloaded':
      case 'stopped':
        break;
    }
  };

  deliver = onEvent;

  let listener: BoundedServer;
  try {
    listener = await listenBounded(app, {
      host: config.listen.host,
      port: config.listen.port,
      logger,
      onReject: (reason) => metrics.serverConnectionsRejected.inc({ reason }),
      ...webDoor.listen,
    });
  } catch (err) {
    maintenance.stop();
    await uptime.close().catch(() => undefined);
    // No server, no daemon: the measurement thread stops too (it may not have started at all).
    await measurementStarted.then(
      (measurement) => measurement.stop(0),
      () => {},
    );
    throw err;
  }
  const address = listener.server.address() as AddressInfo;
  const scheme = webDoor.listen.secure === undefined ? 'http' : 'https';
  const url = `${scheme}://${formatHost(address.address)}:${address.port}`;
  logger.info(
    // `url` last: tests and scripts read it from the line right before the message.
    { page: `${url}/`, url },
    'serving /metrics, /healthz, /readyz, /api/status, /api/history and the status page at /',
  );

  let measurement: MeasurementHost;
  try {
    measurement = await measurementStarted;
  } catch (err) {
    maintenance.stop();
    await uptime.close().catch(() => undefined);
    await listener.close();
    throw err;
  }
  ready = true;

  const applyReload = async (loaded: MonitorConfig): Promise<void> => {
    const began = performance.now();
    const plan = planReload(config, loaded);
    for (const key of plan.kept) {
      logger.warn(
        { key },
        `configuration reload: ${key} cannot change without a restart; the running value stays`,
      );
    }
    config = plan.config;
    configured = new Set(config.environments.map((env) => env.name));
    logger.level = config.logLevel;
    // The registry first: the measurement thread's first events under the new configuration
    // find their series.
    const nextMetricsEnvironments = config.environments.map((env) =>
      metricsEnvironmentOf(env, opts.checks),
    );
    const { rebuilt } = await reconfigureMetrics(metrics, {
      checks: opts.checks,
      previous: metricsEnvironments,
      next: nextMetricsEnvironments,
    });
    metricsEnvironments = nextMetricsEnvironments;
    recorder.bind();
    for (const env of config.environments) recorder.describeEnvironment(env);
    maintenance.update(config.environments);
    status.setEnvironments(config.environments.map((env) => env.name));
    history.setEnvironments(historyEnvironments(config.environments));
    const report = await measurement.reload(config);
    metrics.configLastReloadSuccessful.set(1);
    metrics.configLastReloadSuccessTimestamp.set(Math.floor(Date.now() / 1000));
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
  };
  let reloads: Promise<void> = Promise.resolve();

  let stopping: Promise<void> | undefined;
  return {
    url,
    failed,
    reload(loaded) {
      const next = reloads.then(() => (stopping ? undefined : applyReload(loaded)));
      reloads = next.catch(() => {});
      return next;
    },
    reloadRefused() {
      metrics.configLastReloadSuccessful.set(0);
    },
    stop() {
      stopping ??= (async () => {
        ready = false;
        logger.info({ graceMs: config.shutdownTimeoutMs }, 'shutting down');
        await measurement.stop(config.shutdownTimeoutMs);
        // After the last runs: they are in the record a restart reads.
        await uptime.close().catch(() => undefined);
        maintenance.stop();
        await listener.close();
        logger.info({}, 'stopped');
        logger.flush();
      })();
      return stopping;
    },
  };
}

/**
 * Whether `event` is about an environment that is no longer configured, and so has no series
 * left to record. A session reported unrecoverable is not: the runtime of a removed environment
 * still sweeps its sessions (docs/configuration.md, "Reload"), and one nobody can close is what
 * `IsaSyntheticSessionsUnrecoverable` must still see, so it is counted whatever the configuration.
 * Nor is the open-session count: the ledger's sessions of a removed environment are what
 * `IsaSyntheticSessionsLeaking` must see until they are closed (sessions/removed.ts).
 */
export function fromRemovedEnvironment(
  event: MeasurementEvent,
  configured: ReadonlySet<string>,
): boolean {
  switch (event.type) {
    case 'result':
      return !configured.has(event.result.environment);
    case 'skip':
    case 'abandoned':
    case 'follow_up':
      return !configured.has(event.environment);
    default:
      return false;
  }
}

/** One line per run: what on-call greps for. */
function logRun(logger: Logger, result: CheckResult): void {
  const requestIds = result.steps.map((s) => s.requestId).filter((id) => id !== null);
  logger[result.outcome === 'pass' ? 'info' : 'warn'](
    {
      environment: result.environment,
      check: result.check,
      outcome: result.outcome,
      reason: result.reason,
      ...result.summary,
      durationMs: result.durationMs,
      // Only when the run waited for request-budget tokens: that time is not in durationMs.
      ...(result.budgetWaitMs ? { budgetWaitMs: result.budgetWaitMs } : {}),
      steps: result.steps.map((s) => ({
        name: s.name,
        statusCode: s.statusCode,
        durationMs: s.durationMs,
        ...(s.error ? { error: s.error } : {}),
      })),
      ...(requestIds.length > 0 ? { requestIds } : {}),
      ...(result.followUp === true ? { followUp: true } : {}),
    },
    `${result.check}${result.followUp === true ? ' follow-up' : ''} ${result.outcome}`,
  );
}

function formatHost(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}
