import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import pkg from '../../package.json' with { type: 'json' };

describe('command line', () => {
  it('prints its version', async () => {
    const run = await runCli(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(pkg.version);
  });

  it('prints usage with --help and exits 0', async () => {
    const run = await runCli(['--help']);
    expect(run.code).toBe(0);
    for (const command of ['run', 'check', 'simulate', 'validate-config']) {
      expect(run.stdout).toContain(`isa-monitor ${command}`);
    }
  });

  it.each(['run', 'check', 'simulate', 'validate-config'])(
    'prints help for %s',
    async (command) => {
      const run = await runCli([command, '--help']);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`Usage: isa-monitor ${command}`);
    },
  );

  it('rejects an unknown command with exit 2 and the usage', async () => {
    const run = await runCli(['frobnicate']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unknown command "frobnicate"');
  });

  it('rejects an unknown option with exit 2 and says which', async () => {
    const run = await runCli(['check', 'ping', '--bogus']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Unknown option '--bogus'");
  });

  it('rejects a --measurement.thread it does not know with exit 2, before anything starts', async () => {
    const run = await runCli(['run', '--measurement.thread', 'fiber']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      '--measurement.thread must be one of auto, inline, worker, got "fiber"',
    );
    expect(run.stdout).toBe('');
  });

  it('rejects an unknown check name with exit 2', async () => {
    const run = await runCli([
      'check',
      'dns',
      '--base-url',
      'http://127.0.0.1:1',
      '--api-key-env',
      'K',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('check expects one of: ping, lifecycle');
  });
});
