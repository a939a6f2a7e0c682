import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

async function configFile(text: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'isa-cfg-')), 'config.yaml');
  await writeFile(path, text);
  return path;
}

describe('isa-monitor validate-config', () => {
  it('accepts the shipped example and names its environments', async () => {
    const run = await runCli(['validate-config', '--config', 'examples/simulator.yaml'], {
      env: { ISA_SIMULATOR_API_KEY: 'dev-key-value' },
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('valid (environments: production, sandbox)');
  });

  it('reports every problem at once with its key path, exit 2, no stack trace', async () => {
    const path = await configFile(
      [
        'listen: { port: 99999 }',
        'colour: blue',
        'environments:',
        '  - name: production',
        '    base_url: not-a-url',
        '    api_key_env: MISSING_KEY_VAR',
        '    ping: { interval: 48h }',
        '    lifecycle: { addresses: [] }',
      ].join('\n'),
    );
    const run = await runCli(['validate-config', '--config', path]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/problem\(s\)$/);
    expect(run.stderr).toContain('listen.port');
    expect(run.stderr).toContain('colour');
    expect(run.stderr).toContain('environments[0].base_url');
    expect(run.stderr).toContain('environments[0].ping.interval: must be at most 24h (got "48h")');
    expect(run.stderr).toContain('MISSING_KEY_VAR');
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(lines.length).toBeGreaterThanOrEqual(6);
  });

  it('never echoes a key written into the file', async () => {
    const path = await configFile(
      [
        'environments:',
        '  - name: production',
        '    base_url: https://api.example.invalid',
        '    api_key: sk-live-0123456789',
      ].join('\n'),
    );
    const run = await runCli(['validate-config', '--config', path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('api_key_env');
    expect(run.stderr + run.stdout).not.toContain('sk-live-0123456789');
  });

  it('accepts a deprecated key with a warning on stderr, exit 0', async () => {
    const path = await configFile(
      [
        'environments:',
        '  - name: production',
        '    base_url: https://api.example.invalid',
        '    api_key_env: ISA_TEST_KEY',
        '    lifecycle: { enabled: false }',
        '    analytics: { enabled: true, campaign_id: isa-monitor-synthetic }',
      ].join('\n'),
    );
    const run = await runCli(['validate-config', '--config', path], {
      env: { ISA_TEST_KEY: 'k' },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('valid (environments: production)');
    expect(run.stderr).toMatch(
      /^warning: environments\[0\]\.analytics\.campaign_id: deprecated and ignored: /,
    );
  });

  it('needs --config', async () => {
    const run = await runCli(['validate-config']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('validate-config needs --config FILE');
  });
});
