/**
 * `isa-monitor drift` (docs/cli.md, docs/drift.md): the baselines, the open differences and the
 * comparison across environments, read from the file the daemon keeps beside its `state_file`;
 * `isa-monitor drift accept` makes what an environment's operations return now their baseline,
 * on that file, under the daemon's own lock, recording who did it and from where. A running
 * daemon takes the accept as the file changes (within `DRIFT_SYNC_MS` where the system gives no
 * change events).
 */
import { readlinkSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { responseSpecOf } from '../checks/index.js';
import { CHECK_LIST } from '../checks/index.js';
import { formatProblems, loadConfig, type MonitorConfig } from '../config/index.js';
import { acceptBaselines } from '../drift/book.js';
import { driftReport, type DriftReport } from '../drift/report.js';
import { driftStorePath, readDriftState } from '../drift/store.js';
import { withLock } from '../sessions/lock.js';
import { formatDriftReport } from './drift-format.js';
import { EXIT, parse, UsageError, type CliIO } from './io.js';
import { COMMAND_USAGE } from './usage.js';

const OPTIONS = {
  config: { type: 'string' },
  environment: { type: 'string' },
  operation: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

/** `isa-monitor drift [accept] --config FILE ...` */
export async function driftCommand(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS, true);
  if (values.help) {
    io.out(COMMAND_USAGE['drift'] ?? '');
    return EXIT.ok;
  }
  const [action, ...rest] = positionals;
  if (rest.length > 0 || (action !== undefined && action !== 'accept')) {
    throw new UsageError(`unexpected argument: ${positionals.join(' ')}`);
  }
  const config = configOf(values.config, io);
  if (config === null) return EXIT.usage;
  const names = config.environments.map((env) => env.name);
  if (values.environment !== undefined && !names.includes(values.environment)) {
    io.err(`no environment named ${values.environment} in the configuration (${names.join(', ')})`);
    return EXIT.usage;
  }
  const path = driftStorePath(config.stateFile);
  if (action === 'accept') {
    if (values.environment === undefined) throw new UsageError('drift accept needs --environment');
    return accept(io, path, values.environment, values.operation);
  }
  if (values.operation !== undefined) throw new UsageError('--operation is for drift accept');
  const report = await readReport(path, names, values.environment);
  io.out(values.json ? JSON.stringify(report, null, 2) : formatDriftReport(report, path));
  return EXIT.ok;
}

function configOf(configFile: string | undefined, io: CliIO): MonitorConfig | null {
  const file = configFile ?? io.env['ISA_MONITOR_CONFIG'];
  if (!file) throw new UsageError('drift needs --config FILE');
  const loaded = loadConfig({ checks: CHECK_LIST, configFile: file, env: io.env, cwd: io.cwd });
  if (loaded.ok) return loaded.config;
  io.err(`${file}: ${loaded.problems.length} problem(s)`);
  io.err(formatProblems(loaded.problems));
  return null;
}

/**
 * The document the daemon serves, from the file: the comparison across every configured
 * environment, then only `environment` when one is named. The file's since-times are read, never
 * written.
 */
export async function readReport(
  path: string,
  environments: readonly string[],
  environment?: string,
): Promise<DriftReport> {
  const { state, extras } = await readDriftState(path);
  const report = driftReport({
    state,
    extras,
    now: new Date(),
    specOf: responseSpecOf,
    environments,
  });
  if (environment === undefined) return report;
  const only = report.environments[environment];
  return {
    ...report,
    environments: only ? { [environment]: only } : {},
    across: report.across.filter((difference) => environment in difference.has),
  };
}

async function accept(
  io: CliIO,
  path: string,
  environment: string,
  operation: string | undefined,
): Promise<number> {
  const by = whoAndWhere(io);
  const at = new Date();
  const result = await acceptBaselines({
    path,
    environment,
    ...(operation !== undefined ? { operation } : {}),
    by,
    now: at,
    withLock: (fn) => withLock(`${path}.lock`, fn),
  });
  if (result.accepted.length === 0) {
    const what = operation === undefined ? 'no operation' : `no operation ${operation}`;
    io.err(`${environment}: ${what} has a baseline in ${path}; nothing accepted`);
    return EXIT.checkFailed;
  }
  io.out(
    `${environment}: accepted ${result.accepted.join(', ')} (${result.cleared} difference(s) cleared) ` +
      `at ${at.toISOString()} by ${by}; a running daemon takes it within 5 s`,
  );
  return EXIT.ok;
}

/**
 * Who accepts, from where: the user, the host, and the terminal (or, without one, the parent
 * process that ran the command: a script, a deploy job).
 */
export function whoAndWhere(io: Pick<CliIO, 'isTTY'>): string {
  const user = safe(() => userInfo().username) ?? 'unknown';
  const tty = io.isTTY ? safe(() => readlinkSync('/proc/self/fd/1')) : null;
  const from = tty !== null ? `tty ${tty}` : `ppid ${process.ppid}`;
  return `${user}@${hostname()} (${from})`;
}

function safe(read: () => string): string | null {
  try {
    return read();
  } catch {
    return null;
  }
}
