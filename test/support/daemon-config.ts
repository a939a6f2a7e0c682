/**
 * Config files for tests that run the daemon as a child process: one environment with short
 * intervals against a simulator (or a proxy in front of it) on loopback, and a state file that
 * `check` runs may share with the daemon.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LIFECYCLE = { interval: '2s', timeout: '1500ms', poll_interval: '100ms', poll_timeout: '1s' };

export interface DaemonConfigFile {
  dir: string;
  path: string;
  stateFile: string;
}

export interface DaemonConfigOptions {
  /** The lifecycle's one address (a simulator scenario street); default `2 Pending Ave`. */
  street1?: string;
  /** The address's `expect`; default `any`. */
  expect?: string;
  /** Lifecycle keys over the short defaults above. */
  lifecycle?: Record<string, string>;
  /** The ping section as flow YAML; default every second with a 500 ms timeout. */
  ping?: string;
  /** `request_budget_per_second`; default 20. */
  requestBudget?: number;
  /** Top-level YAML appended after the environments. */
  extra?: string;
}

/** Writes the config into a new temporary directory; the state file is `state/sessions.json` in it. */
export async function writeDaemonConfig(
  baseUrl: string,
  opts: DaemonConfigOptions = {},
): Promise<DaemonConfigFile> {
  const dir = await mkdtemp(join(tmpdir(), 'isa-daemon-'));
  const stateFile = join(dir, 'state', 'sessions.json');
  const path = join(dir, 'config.yaml');
  await writeFile(
    path,
    `listen: { host: 127.0.0.1, port: 0 }
state_file: ${stateFile}
shutdown_timeout: 3s
environments:
  - name: production
    base_url: ${baseUrl}
    api_key_env: ISA_PRODUCTION_API_KEY
    request_budget_per_second: ${opts.requestBudget ?? 20}
    ping: ${opts.ping ?? '{ interval: 1s, timeout: 500ms }'}
    lifecycle:
${Object.entries({ ...LIFECYCLE, ...opts.lifecycle })
  .map(([k, v]) => `      ${k}: ${v}`)
  .join('\n')}
      addresses:
        - { street1: "${opts.street1 ?? '2 Pending Ave'}", zip: "80202", expect: ${opts.expect ?? 'any'} }
${opts.extra ?? ''}`,
  );
  return { dir, path, stateFile };
}
