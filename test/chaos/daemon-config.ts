/**
 * Daemon configs for the chaos tests: short intervals against a simulator on loopback, one state
 * file that `check` runs share with the daemon.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LIFECYCLE = { interval: '2s', timeout: '1500ms', poll_interval: '100ms', poll_timeout: '1s' };

export interface ChaosConfig {
  dir: string;
  path: string;
  stateFile: string;
}

export async function writeChaosConfig(
  baseUrl: string,
  opts: {
    street1?: string;
    lifecycle?: Record<string, string>;
    ping?: string;
    extra?: string;
  } = {},
): Promise<ChaosConfig> {
  const dir = await mkdtemp(join(tmpdir(), 'isa-chaos-'));
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
    request_budget_per_second: 20
    ping: ${opts.ping ?? '{ interval: 1s, timeout: 500ms }'}
    lifecycle:
${Object.entries({ ...LIFECYCLE, ...opts.lifecycle })
  .map(([k, v]) => `      ${k}: ${v}`)
  .join('\n')}
      addresses:
        - { street1: "${opts.street1 ?? '2 Pending Ave'}", zip: "80202", expect: any }
${opts.extra ?? ''}`,
  );
  return { dir, path, stateFile };
}
