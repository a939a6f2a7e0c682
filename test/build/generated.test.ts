/**
 * Every generated file is exactly what `npm run generate` writes: the generator's check mode
 * (scripts/generate.ts --check) runs in its own process, as a developer or CI runs it, writes
 * nothing, and names each stale file.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../scripts/rules/gen-rule-tests.js';

const TSX = createRequire(import.meta.url).resolve('tsx');

describe('npm run generate -- --check', () => {
  it('finds no stale generated file', () => {
    const run = spawnSync(process.execPath, ['--import', TSX, 'scripts/generate.ts', '--check'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    const stale = run.stderr
      .split('\n')
      .filter((line) => line.startsWith('out of date: '))
      .map((line) => line.slice('out of date: '.length));
    expect(
      stale,
      `stale generated files; regenerate with: npm run generate\n${run.stderr}`,
    ).toEqual([]);
    expect(run.status, run.stderr).toBe(0);
    // The rule tests feed every scenario through the real recorder: seconds alone, more when busy.
  }, 180_000);
});
