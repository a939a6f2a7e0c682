/** `isa-monitor validate-slo FILE...` (docs/cli.md, "validate-slo"). */
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const FIXTURES = 'test/report/fixtures/sloth';

describe('isa-monitor validate-slo', () => {
  it('accepts the shipped spec and specs of several documents, in both forms', async () => {
    const run = await runCli([
      'validate-slo',
      'slo/isa-monitor.sloth.yaml',
      `${FIXTURES}/good/good-multi-k8s.yaml`,
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `${FIXTURES}/good/good-multi-k8s.yaml: warehouse: checkout-errors (events), cart-ratio (raw)`,
    );
    expect(run.stdout).toContain('valid: 7 objective(s) in 2 file(s)');
  });

  it('lists every problem of every file with its document and key path, exit 2', async () => {
    const run = await runCli([
      'validate-slo',
      `${FIXTURES}/bad/bad-aa.yaml`,
      `${FIXTURES}/bad/bad-multi.yaml`,
      `${FIXTURES}/missing.yaml`,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n').filter(Boolean)).toEqual([
      `warning: ${FIXTURES}/bad/bad-aa.yaml: slos[0].alerting.pageAlert: unknown key, ignored as Sloth ignores it`,
      `warning: ${FIXTURES}/bad/bad-aa.yaml: slos[0].alerting.ticketAlert: unknown key, ignored as Sloth ignores it`,
      '3 problem(s)',
      `${FIXTURES}/bad/bad-aa.yaml: slos[1].objective: must be a number above 0 and at most 100`,
      `${FIXTURES}/bad/bad-multi.yaml: document 2: slos[1].sli: needs one SLI type: events (error and total queries) or raw (an error ratio query)`,
      `${FIXTURES}/missing.yaml: cannot read: ENOENT`,
    ]);
  });

  it('refuses an objective defined in two files, as Sloth does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'isa-slo-'));
    const copy = join(dir, 'copy.yaml');
    await writeFile(copy, readFileSync(`${FIXTURES}/good/good-k8s.yaml`, 'utf8'));
    const run = await runCli(['validate-slo', `${FIXTURES}/good/good-k8s.yaml`, copy]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `${copy}: objective shop-checkout-errors is already defined in ${FIXTURES}/good/good-k8s.yaml`,
    );
  });

  it('needs a file', async () => {
    const run = await runCli(['validate-slo']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('validate-slo needs at least one FILE');
  });
});
