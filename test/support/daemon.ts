/** An in-process daemon (measurement inline, logs silent) from configuration text, for tests. */
import { pino } from 'pino';
import { parseConfigText } from '../../src/config/index.js';
import { startDaemon, type Daemon } from '../../src/daemon.js';
import { BUILD } from '../support/build.js';
import { CHECK_LIST } from '../../src/checks/index.js';

/** Validates `yaml` as a config file would be (with `env` as the process environment) and starts it. */
export async function startDaemonFromYaml(
  yaml: string,
  env: Record<string, string>,
  cwd: string,
): Promise<Daemon> {
  const loaded = parseConfigText(yaml, { checks: CHECK_LIST, env, cwd });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  return startDaemon({
    checks: CHECK_LIST,
    config: loaded.config,
    logger: pino({ level: 'silent' }),
    build: BUILD,
    measurement: 'inline',
  });
}
