/**
 * The daemon's main thread: metrics registry, status history, HTTP server and logs. The checks run
 * in the measurement worker and report here as events; this thread turns them into metrics, status
 * and one log line per run.
 */
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { AnyCheck } from './kernel/check.js';
import { sectionOf, type MonitorConfig } from './config/index.js';
import {
  startMeasurement,
  type MeasurementHost,
  type MeasurementMode,
} from './measurement/host.js';
import type { MeasurementEvent } from './measurement/messages.js';
import type { BuildInfo } from './metrics/registry.js';
import { createServerApp } from './server/app.js';
import { listenBounded, type BoundedServer } from './server/listen.js';
import { webDoorWiring, type WebDoorOptions } from './server/web-door.js';
import { routeEvent } from './daemon/events.js';
import { applyReload } from './daemon/reload.js';
import {
  closeStores,
  createStores,
  initialState,
  openUptimeRecord,
  type DaemonState,
  type DaemonStores,
} from './daemon/stores.js';

export { fromRemovedEnvironment } from './daemon/events.js';

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
  const state = initialState(opts.config, opts.checks);
  // Set below, before the record is ever asked about maintenance (it asks when it writes).
  let maintenanceActive = (_environment: string): boolean => false;
  const uptime = await openUptimeRecord(opts.checks, state, logger, (environment) =>
    maintenanceActive(environment),
  );
  // The measurement thread starts first: its start-up (modules, environments, one cron task per
  // interval) runs on the other core while this thread builds the registry and binds the server.
  // Its events wait for `deliver`, which is set below, before this function first yields, so none
  // can arrive early.
  let deliver: (event: MeasurementEvent) => void = () => {};
  const measurementStarted = startMeasurement(
    { config: state.config, userAgent: `isa-monitor/${opts.build.version}` },
    (event) => deliver(event),
    opts.measurement === 'inline'
      ? { mode: 'inline', checks: opts.checks }
      : { mode: 'worker', entry: opts.workerEntry },
  );
  // Awaited below; until then a failed start must not count as an unhandled rejection.
  measurementStarted.catch(() => {});
  const stores = createStores(opts, state, uptime);
  maintenanceActive = (environment) => stores.maintenance.isActive(environment);
  let fail: (reason: string) => void = () => {};
  const failed = new Promise<string>((resolve) => (fail = resolve));
  const route = {
    stores,
    state,
    logger,
    fail: (reason: string) => {
      state.ready = false;
      fail(reason);
    },
  };
  deliver = (event) => routeEvent(event, route);

  const { listener, url } = await serve(opts, state, stores, measurementStarted);
  let measurement: MeasurementHost;
  try {
    measurement = await measurementStarted;
  } catch (err) {
    await closeStores(stores);
    await listener.close();
    throw err;
  }
  state.ready = true;
  return daemonHandle({ ...opts, state, stores, measurement, listener, url, failed });
}

/**
 * Binds the metrics and status server over the stores. Without a server there is no daemon: on
 * failure the stores close and the measurement thread stops too (it may not have started at all).
 */
async function serve(
  opts: DaemonOptions,
  state: DaemonState,
  stores: DaemonStores,
  measurementStarted: Promise<MeasurementHost>,
): Promise<{ listener: BoundedServer; url: string }> {
  const { logger } = opts;
  const webDoor = webDoorWiring(opts.web, logger);
  let listener: BoundedServer;
  try {
    listener = await listenBounded(serverApp(opts, state, stores, webDoor.app), {
      host: state.config.listen.host,
      port: state.config.listen.port,
      logger,
      onReject: (reason) => stores.metrics.serverConnectionsRejected.inc({ reason }),
      ...webDoor.listen,
    });
  } catch (err) {
    await closeStores(stores);
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
  return { listener, url };
}

/** The express app over the stores and the configuration in force. */
function serverApp(
  opts: DaemonOptions,
  state: DaemonState,
  stores: DaemonStores,
  webDoorApp: ReturnType<typeof webDoorWiring>['app'],
): ReturnType<typeof createServerApp> {
  const availabilityCheck = opts.checks.find((check) => check.availability !== undefined);
  return createServerApp({
    registry: stores.metrics.registry,
    status: stores.status,
    history: stores.history,
    uptime: {
      store: stores.uptime,
      // The configuration in force: a reload adds and removes environments here too.
      environments: () =>
        state.config.environments.map((env) => {
          const section = availabilityCheck ? sectionOf(env, availabilityCheck) : null;
          return { name: env.name, intervalMs: section?.enabled ? section.intervalMs : 0 };
        }),
      inMaintenance: (environment) => stores.maintenance.isActive(environment),
    },
    isReady: () => state.ready,
    logger: opts.logger,
    ...webDoorApp,
  });
}

/** The running daemon: reloads one at a time, in the order asked, and one graceful stop. */
function daemonHandle(running: {
  checks: readonly AnyCheck[];
  logger: Logger;
  state: DaemonState;
  stores: DaemonStores;
  measurement: MeasurementHost;
  listener: BoundedServer;
  url: string;
  failed: Promise<string>;
}): Daemon {
  const { state, stores, measurement, listener, logger } = running;
  let reloads: Promise<void> = Promise.resolve();
  let stopping: Promise<void> | undefined;
  return {
    url: running.url,
    failed: running.failed,
    reload(loaded) {
      const next = reloads.then(() => (stopping ? undefined : applyReload(loaded, running)));
      reloads = next.catch(() => {});
      return next;
    },
    reloadRefused() {
      stores.metrics.configLastReloadSuccessful.set(0);
    },
    stop() {
      stopping ??= (async () => {
        state.ready = false;
        logger.info({ graceMs: state.config.shutdownTimeoutMs }, 'shutting down');
        await measurement.stop(state.config.shutdownTimeoutMs);
        // After the last runs: they are in the record a restart reads.
        await closeStores(stores);
        await listener.close();
        logger.info({}, 'stopped');
        logger.flush();
      })();
      return stopping;
    },
  };
}

function formatHost(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}
