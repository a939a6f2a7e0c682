/**
 * The Dockerfile passes its linter (scripts/lint-dockerfile.mjs, dockerfile-utils), keeps the
 * HEALTHCHECK's start period, and the linter is live: the same file with a broken flag fails.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

/** Runs the linter on `text`; its exit code and what it printed. */
function lint(text: string): { status: number | null; output: string } {
  const file = join(mkdtempSync(join(tmpdir(), 'isa-dockerfile-')), 'Dockerfile');
  writeFileSync(file, text);
  const run = spawnSync(process.execPath, ['scripts/lint-dockerfile.mjs', file], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the Dockerfile', () => {
  it('passes the linter without a word', () => {
    expect(lint(DOCKERFILE)).toEqual({ status: 0, output: '' });
  });

  it('health-checks with a start period', () => {
    expect(DOCKERFILE).toMatch(/^HEALTHCHECK [^\n]*--start-period=15s /m);
  });

  it('fails the linter with a broken HEALTHCHECK flag, and with a mere warning', () => {
    const broken = lint(DOCKERFILE.replace('--start-period=15s', '--start-period=15x'));
    expect(broken.status).toBe(1);
    expect(broken.output).toMatch(/Dockerfile:\d+:\d+: error: .*unknown unit x/);
    const warned = lint(DOCKERFILE.replace(/^EXPOSE 9464$/m, 'EXPOSE 9464\nMAINTAINER nobody'));
    expect(warned.status).toBe(1);
    expect(warned.output).toContain('warning: MAINTAINER has been deprecated');
  });
});
