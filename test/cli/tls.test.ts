import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startSimulatorProcess } from '../support/cli.js';

const KEY = 'tls-cli-key-0a1b2c3d4e5f';
const env = { ISA_TEST_KEY: KEY };

let dir: string;
let caFile: string;
let url: string;
let stopSimulator: () => Promise<unknown>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'isa-tls-cli-'));
  caFile = join(dir, 'sim-ca.pem');
  const simulator = await startSimulatorProcess([
    '--api-key',
    KEY,
    '--tls',
    '--tls-days',
    '5',
    '--tls-ca-out',
    caFile,
  ]);
  url = simulator.url;
  stopSimulator = simulator.stop;
});
afterAll(async () => {
  await stopSimulator?.();
  rmSync(dir, { recursive: true, force: true });
});

describe('isa-monitor simulate --tls', () => {
  it('prints an https URL and has written its CA (PEM) before it', () => {
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = new X509Certificate(readFileSync(caFile));
    expect(ca.ca).toBe(true);
  });
});

describe('isa-monitor check --base-url ... --ca-file', () => {
  const base = () => ['--base-url', url, '--api-key-env', 'ISA_TEST_KEY', '--json'];

  it('passes a ping over HTTPS when the CA file is given', async () => {
    const run = await runCli(['check', 'ping', ...base(), '--ca-file', caFile], { env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'pass' });
  });

  it('fails the ping with network_error without it', async () => {
    const run = await runCli(['check', 'ping', ...base()], { env });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'fail', reason: 'network_error' });
  });

  it('reports a CA file that cannot be read as a config problem (exit 2)', async () => {
    const run = await runCli(['check', 'ping', ...base(), '--ca-file', join(dir, 'none.pem')], {
      env,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `environments[0].ca_file: cannot read ${join(dir, 'none.pem')}: no such file or directory`,
    );
  });

  it('refuses --ca-file without --base-url', async () => {
    const run = await runCli(['check', 'ping', '--config', 'x.yaml', '--ca-file', caFile], {
      env,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--ca-file goes with --base-url');
  });
});
