import { formatProblems, loadConfig } from '../config/index.js';
import { CHECK_LIST } from '../checks/index.js';
import { COMMAND_USAGE } from './usage.js';
import { EXIT, parse, UsageError, type CliIO } from './io.js';

/** `isa-monitor validate-config --config FILE` */
export function validateConfigCommand(args: string[], io: CliIO): number {
  const { values } = parse(args, { config: { type: 'string' }, help: { type: 'boolean' } });
  if (values.help) {
    io.out(COMMAND_USAGE['validate-config'] ?? '');
    return EXIT.ok;
  }
  const configFile = values.config ?? io.env['ISA_MONITOR_CONFIG'];
  if (!configFile) throw new UsageError('validate-config needs --config FILE');
  const loaded = loadConfig({ checks: CHECK_LIST, configFile, env: io.env, cwd: io.cwd });
  if (!loaded.ok) {
    io.err(`${configFile}: ${loaded.problems.length} problem(s)`);
    io.err(formatProblems(loaded.problems));
    return EXIT.usage;
  }
  // Still valid (exit 0): a deprecated key loads, but the file should change; a part that cannot
  // work as configured is said with its arithmetic.
  for (const warning of loaded.warnings) io.err(`warning: ${formatProblems([warning])}`);
  const envs = loaded.config.environments.map((e) => e.name).join(', ');
  io.out(`${configFile}: valid (environments: ${envs})`);
  return EXIT.ok;
}
