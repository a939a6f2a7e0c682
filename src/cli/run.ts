import type { DestinationStream, Logger } from 'pino';
import { CHECK_LIST } from '../checks/index.js';
import {
  environmentSecrets,
  formatProblems,
  isDemoMode,
  loadConfig,
  type MonitorConfig,
} from '../config/index.js';
import { startDaemon, type Daemon } from '../daemon.js';
import {
  MEASUREMENT_THREADS,
  measurementMode,
  type MeasurementThread,
} from '../measurement/host.js';
import {
  addSecrets,
  createLogger,
  holdLines,
  standardDestination,
  type HeldDestination,
} from '../logging.js';
import { WebConfigSource } from '../server/front-door.js';
import type { ReloadOutcome } from '../server/reload-route.js';
import type { WebDoorOptions } from '../server/web-door.js';
import { VERSION, buildInfo } from '../version.js';
import type { Demo } from './demo.js';
import { EXIT, parse, UsageError, type CliIO } from './io.js';
import { COMMAND_USAGE } from './usage.js';

const DEMO_LISTEN = { host: '127.0.0.1', port: 9464 };

/** The options of `isa-monitor run`. */
const RUN_OPTIONS = {
  config: { type: 'string' },
  'log-level': { type: 'string' },
  listen: { type: 'string' },
  'web.config.file': { type: 'string' },
  'web.enable-lifecycle': { type: 'boolean' },
  'measurement.thread': { type: 'string' },
  help: { type: 'boolean' },
} as const;

type RunValues = ReturnType<typeof parse<typeof RUN_OPTIONS>>['values'];

/** What the start-up settled on: the configuration, its logger, and demo mode's parts. */
interface StartUp {
  config: MonitorConfig;
  logger: Logger;
  configFile: string | undefined;
  listen: { host: string; port: number } | undefined;
  demo?: Demo;
  /** Demo mode's start-up lines, held until its banner is out. */
  held?: HeldDestination;
  stdout?: DestinationStream;
}

/** `isa-monitor run [--config FILE]` */
export async function runCommand(args: string[], io: CliIO): Promise<number> {
  const { values } = parse(args, RUN_OPTIONS);
  if (values.help) {
    io.out(COMMAND_USAGE['run'] ?? '');
    return EXIT.ok;
  }
  const webConfigFile = values['web.config.file'];
  // Checked before anything starts: an invalid file stops the start with every problem.
  const webConfig = webConfigFile === undefined ? null : openWebConfig(webConfigFile, io);
  if (webConfig !== null && !webConfig.ok) return EXIT.usage;
  const thread = measurementThread(values);
  const start = await startUp(values, io);
  if (typeof start === 'number') return start;
  const { logger } = start;
  // Bound once the daemon runs: a reload asked while it starts is refused.
  let reloadNow = (): Promise<ReloadOutcome> =>
    Promise.resolve({ applied: false, problems: ['the daemon is still starting'] });
  const web: WebDoorOptions = {
    source: webConfig === null ? null : webConfig.source,
    reloadRoute: { enabled: values['web.enable-lifecycle'] === true, reload: () => reloadNow() },
  };
  const daemon = await launch(start, web, thread);
  if (daemon === null) return 1;
  announceDemo(start, daemon.url);
  const serialReload = serialReloads(reloader(start, values, io, daemon), logger, daemon);
  reloadNow = () => serialReload('POST /-/reload');
  io.onReloadRequest(() => void serialReload('SIGHUP'));
  return waitAndStop(io, daemon, start);
}

/** Starts the daemon; null (logged) when it could not start. */
async function launch(
  start: StartUp,
  web: WebDoorOptions,
  thread: MeasurementThread,
): Promise<Daemon | null> {
  const { config, logger } = start;
  const measurement = measurementMode(thread, config.environments.length);
  logger.info(
    { measurementThread: measurement, asked: thread, environments: config.environments.length },
    measurement === 'inline' ? 'measuring on the main thread' : 'measuring in a worker thread',
  );
  try {
    const build = buildInfo();
    return await startDaemon({ checks: CHECK_LIST, config, logger, build, web, measurement });
  } catch (err) {
    start.held?.release();
    logger.error({ err }, 'could not start');
    logger.flush();
    await start.demo?.simulator.close();
    return null;
  }
}

/**
 * Demo mode (the embedded simulator) or the configuration file; an exit status when the file is
 * refused, with every problem printed.
 */
async function startUp(values: RunValues, io: CliIO): Promise<StartUp | number> {
  const listen = values.listen === undefined ? undefined : parseListen(values.listen);
  const configFile = values.config ?? io.env['ISA_MONITOR_CONFIG'];
  if (isDemoMode({ configFile, env: io.env })) return startDemoMode(values, listen);
  const loaded = loadConfig({ checks: CHECK_LIST, configFile, env: io.env, cwd: io.cwd });
  if (!loaded.ok) {
    io.err(`configuration invalid: ${loaded.problems.length} problem(s)`);
    io.err(formatProblems(loaded.problems));
    return EXIT.usage;
  }
  const config = listen ? { ...loaded.config, listen } : loaded.config;
  const logger = createLogger({
    level: values['log-level'] ?? config.logLevel,
    secrets: config.environments.flatMap(environmentSecrets),
  });
  logger.info(
    { version: VERSION, environments: config.environments.map((e) => e.name), configFile },
    'isa-monitor starting',
  );
  logWarnings(logger, loaded.warnings);
  return { config, logger, configFile, listen };
}

/**
 * Starts the embedded simulator. Demo mode's banner must be the first line, yet it names the bound
 * status URL: the lines of the start-up are held until the banner is out.
 */
async function startDemoMode(values: RunValues, listen: StartUp['listen']): Promise<StartUp> {
  const stdout = standardDestination();
  const held = holdLines(stdout);
  const level = values['log-level'] ?? 'info';
  const bootLogger = createLogger({ level, secrets: [], destination: held });
  // The simulator is loaded only here: outside demo mode the daemon never holds it.
  const { startDemo } = await import('./demo.js');
  let demo: Demo;
  try {
    demo = await startDemo(bootLogger, listen ?? DEMO_LISTEN);
  } catch (err) {
    held.release();
    throw err;
  }
  const logger = createLogger({ level, secrets: demo.apiKeys, destination: held });
  return { config: demo.config, logger, configFile: undefined, listen, demo, held, stdout };
}

/** Demo mode's banner, then the start-up lines it held back. */
function announceDemo({ demo, held, stdout }: StartUp, url: string): void {
  if (!demo || !held || !stdout) return;
  createLogger({ level: 'warn', secrets: demo.apiKeys, destination: stdout }).warn(
    {
      page: `${url}/`,
      status: `${url}/api/status`,
      metrics: `${url}/metrics`,
      simulator: demo.simulator.url,
    },
    `DEMO MODE: open the status page at ${url}/ to watch an embedded ISA API simulator ` +
      'play a scripted fault timeline (not a real API). ' +
      'Pass --config FILE (or set ISA_MONITOR_CONFIG) to monitor real environments.',
  );
  held.release();
}

/** One reload: the file read again and applied, or refused with every problem logged. */
function reloader(
  start: StartUp,
  values: RunValues,
  io: CliIO,
  running: Daemon,
): (trigger: string) => Promise<ReloadOutcome> {
  const { logger, configFile, listen } = start;
  return async (trigger) => {
    if (start.demo) {
      logger.warn(
        { signal: trigger },
        'configuration reload: demo mode reads no file; nothing to reload',
      );
      return { applied: true };
    }
    logger.info({ signal: trigger, configFile }, 'configuration reload requested');
    const loaded = loadConfig({ checks: CHECK_LIST, configFile, env: io.env, cwd: io.cwd });
    if (!loaded.ok) {
      // Every problem, as validate-config prints them; the configuration in force stays.
      for (const problem of loaded.problems) {
        logger.error({ key: problem.path }, `configuration: ${problem.path}: ${problem.message}`);
      }
      logger.error(
        { problems: loaded.problems.length },
        'configuration reload refused: the configuration in force stays',
      );
      running.reloadRefused();
      return { applied: false, problems: loaded.problems.map((p) => `${p.path}: ${p.message}`) };
    }
    // The new keys are scrubbed before anything of the new configuration is logged.
    addSecrets(logger, loaded.config.environments.flatMap(environmentSecrets));
    logWarnings(logger, loaded.warnings);
    const logLevel = values['log-level'] ?? loaded.config.logLevel;
    await running.reload({ ...loaded.config, logLevel, ...(listen ? { listen } : {}) });
    return { applied: true };
  };
}

/** SIGHUP and `/-/reload` take turns: each reload reads the file after the one before is applied. */
function serialReloads(
  reload: (trigger: string) => Promise<ReloadOutcome>,
  logger: Logger,
  running: Daemon,
): (trigger: string) => Promise<ReloadOutcome> {
  let reloads: Promise<unknown> = Promise.resolve();
  return (trigger) => {
    const next = reloads.then(() =>
      reload(trigger).catch((err: unknown): ReloadOutcome => {
        logger.error({ err }, 'configuration reload failed');
        running.reloadRefused();
        return { applied: false, problems: ['the reload failed; see the log'] };
      }),
    );
    reloads = next;
    return next;
  };
}

/** Runs until a stop signal or the engine's death, then stops; non-zero after a death. */
async function waitAndStop(io: CliIO, daemon: Daemon, { logger, demo }: StartUp): Promise<number> {
  const stop = await Promise.race([
    io.waitForStop().then((signal) => ({ signal, failure: null })),
    daemon.failed.then((failure) => ({ signal: null, failure })),
  ]);
  if (stop.failure !== null) {
    // Exit non-zero so a supervisor restarts the monitor instead of leaving it blind.
    logger.error({ detail: stop.failure }, 'stopping: the measurement engine died');
  } else {
    logger.info({ signal: stop.signal }, 'stop requested');
  }
  await daemon.stop();
  await demo?.simulator.close();
  return stop.failure === null ? EXIT.ok : 1;
}

function logWarnings(logger: Logger, warnings: readonly { path: string; message: string }[]): void {
  for (const warning of warnings) {
    logger.warn({ key: warning.path }, `configuration: ${warning.path}: ${warning.message}`);
  }
}

/** Reads `--web.config.file`; prints every problem with its key path when it cannot be used. */
function openWebConfig(
  file: string,
  io: CliIO,
): { ok: true; source: WebConfigSource } | { ok: false } {
  const opened = WebConfigSource.open(file);
  if (opened.ok) return opened;
  io.err(`web configuration invalid: ${opened.problems.length} problem(s)`);
  io.err(formatProblems(opened.problems));
  return { ok: false };
}

function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:(.*):)?(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port > 65535)
    throw new UsageError(`--listen expects HOST:PORT or PORT, got "${value}"`);
  const host = (match[1] ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}

/** `--measurement.thread`, `auto` by default. */
function measurementThread(values: RunValues): MeasurementThread {
  const asked = values['measurement.thread'] ?? 'auto';
  if (!(MEASUREMENT_THREADS as readonly string[]).includes(asked))
    throw new UsageError(
      `--measurement.thread must be one of ${MEASUREMENT_THREADS.join(', ')}, got "${asked}"`,
    );
  return asked as MeasurementThread;
}
