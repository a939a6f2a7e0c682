import type { DestinationStream, Logger } from 'pino';
import { CHECK_LIST } from '../checks/index.js';
import {
  environmentSecrets,
  formatProblems,
  isDemoMode,
  loadConfig,
  type MonitorConfig,
} from '../config/index.js';
import { startDaemon } from '../daemon.js';
import {
  addSecrets,
  createLogger,
  holdLines,
  standardDestination,
  type HeldDestination,
} from '../logging.js';
import { VERSION, buildInfo } from '../version.js';
import type { Demo } from './demo.js';
import { EXIT, parse, UsageError, type CliIO } from './io.js';
import { COMMAND_USAGE } from './usage.js';

const DEMO_LISTEN = { host: '127.0.0.1', port: 9464 };

/** `isa-monitor run [--config FILE]` */
export async function runCommand(args: string[], io: CliIO): Promise<number> {
  const { values } = parse(args, {
    config: { type: 'string' },
    'log-level': { type: 'string' },
    listen: { type: 'string' },
    help: { type: 'boolean' },
  });
  if (values.help) {
    io.out(COMMAND_USAGE['run'] ?? '');
    return EXIT.ok;
  }
  const listen = values.listen === undefined ? undefined : parseListen(values.listen);
  const configFile = values.config ?? io.env['ISA_MONITOR_CONFIG'];

  let config: MonitorConfig;
  let demo: Demo | undefined;
  let logger: Logger;
  // Demo mode's banner must be the first line, yet it names the bound status URL: the lines of
  // the start-up are held until the banner is out.
  let held: HeldDestination | undefined;
  let stdout: DestinationStream | undefined;
  if (isDemoMode({ configFile, env: io.env })) {
    stdout = standardDestination();
    held = holdLines(stdout);
    const level = values['log-level'] ?? 'info';
    const bootLogger = createLogger({ level, secrets: [], destination: held });
    // The simulator is loaded only here: outside demo mode the daemon never holds it.
    const { startDemo } = await import('./demo.js');
    try {
      demo = await startDemo(bootLogger, listen ?? DEMO_LISTEN);
    } catch (err) {
      held.release();
      throw err;
    }
    config = demo.config;
    logger = createLogger({ level, secrets: demo.apiKeys, destination: held });
  } else {
    const loaded = loadConfig({ checks: CHECK_LIST, configFile, env: io.env, cwd: io.cwd });
    if (!loaded.ok) {
      io.err(`configuration invalid: ${loaded.problems.length} problem(s)`);
      io.err(formatProblems(loaded.problems));
      return EXIT.usage;
    }
    config = listen ? { ...loaded.config, listen } : loaded.config;
    logger = createLogger({
      level: values['log-level'] ?? config.logLevel,
      secrets: config.environments.flatMap(environmentSecrets),
    });
    logger.info(
      { version: VERSION, environments: config.environments.map((e) => e.name), configFile },
      'isa-monitor starting',
    );
    for (const warning of loaded.warnings) {
      logger.warn({ key: warning.path }, `configuration: ${warning.path}: ${warning.message}`);
    }
  }

  let daemon;
  try {
    daemon = await startDaemon({ checks: CHECK_LIST, config, logger, build: buildInfo() });
  } catch (err) {
    held?.release();
    logger.error({ err }, 'could not start');
    logger.flush();
    await demo?.simulator.close();
    return 1;
  }
  if (demo && held && stdout) {
    createLogger({ level: 'warn', secrets: demo.apiKeys, destination: stdout }).warn(
      {
        page: `${daemon.url}/`,
        status: `${daemon.url}/api/status`,
        metrics: `${daemon.url}/metrics`,
        simulator: demo.simulator.url,
      },
      `DEMO MODE: open the status page at ${daemon.url}/ to watch an embedded ISA API simulator ` +
        'play a scripted fault timeline (not a real API). ' +
        'Pass --config FILE (or set ISA_MONITOR_CONFIG) to monitor real environments.',
    );
    held.release();
  }
  const running = daemon;
  const reload = async (): Promise<void> => {
    if (demo) {
      logger.warn(
        { signal: 'SIGHUP' },
        'configuration reload: demo mode reads no file; nothing to reload',
      );
      return;
    }
    logger.info({ signal: 'SIGHUP', configFile }, 'configuration reload requested');
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
      return;
    }
    // The new keys are scrubbed before anything of the new configuration is logged.
    addSecrets(logger, loaded.config.environments.flatMap(environmentSecrets));
    for (const warning of loaded.warnings) {
      logger.warn({ key: warning.path }, `configuration: ${warning.path}: ${warning.message}`);
    }
    const logLevel = values['log-level'] ?? loaded.config.logLevel;
    await running.reload({ ...loaded.config, logLevel, ...(listen ? { listen } : {}) });
  };
  io.onReloadRequest(() => {
    reload().catch((err: unknown) => {
      logger.error({ err }, 'configuration reload failed');
      running.reloadRefused();
    });
  });
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

function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:(.*):)?(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port > 65535)
    throw new UsageError(`--listen expects HOST:PORT or PORT, got "${value}"`);
  const host = (match[1] ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}
