/**
 * `isa-monitor check tls --base-url URL [--ca-file FILE] --json` as a user runs it: the built CLI
 * against `simulate --tls`, both child processes, and no API key anywhere.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startSimulatorProcess } from '../../../test/support/cli.js';

let dir: string;
let caFile: string;
let url: string;
let stopSimulator: (() => Promise<unknown>) | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'isa-check-tls-'));
  caFile = join(dir, 'ca.pem');
  const simulator = await startSimulatorProcess([
    '--api-key',
    'sim-key-0123456789',
    '--tls',
    '--tls-days',
    '10',
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

describe('isa-monitor check tls --base-url', () => {
  it('needs no API key and prints result, expires_at, days_left and verified', async () => {
    // No ISA_* variable at all: the check sends no API request.
    const run = await runCli(['check', 'tls', '--base-url', url, '--ca-file', caFile, '--json']);
    expect(run.stderr).toBe('');
    const doc = JSON.parse(run.stdout) as Record<string, unknown>;
    // 10 days left is under the default min_days (14): the check fails, and says why.
    expect(run.code).toBe(1);
    expect(doc).toMatchObject({
      check: 'tls',
      outcome: 'fail',
      result: 'expiring',
      verified: true,
    });
    expect(typeof doc['days_left']).toBe('number');
    expect(doc['days_left']).toBeGreaterThanOrEqual(9);
    expect(Date.parse(String(doc['expires_at']))).toBeGreaterThan(Date.now());
  });

  it('says untrusted, with the expiry, without the CA file', async () => {
    const run = await runCli(['check', 'tls', '--base-url', url, '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ result: 'untrusted', verified: false });
    expect(JSON.parse(run.stdout)['expires_at']).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('prints the certificate line in its trace', async () => {
    const run = await runCli(['check', 'tls', '--base-url', url, '--ca-file', caFile]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /certificate expiring: expires \d{4}-\d\d-\d\d \(\d+ days\), verified/,
    );
  });
});
