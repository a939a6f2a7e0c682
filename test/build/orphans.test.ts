/**
 * A generated rule test whose scenario is gone (its check was removed with its folder) is
 * removed by `npm run generate` and reported by `--check` (docs/architecture.md, "Generated
 * files"); hand-written files beside it are left alone.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { orphanedFiles } from '../../scripts/generate.js';
import { GENERATED_MARK } from '../../scripts/rules/gen-rule-tests.js';
import { writeGenerated } from '../../scripts/write-generated.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'isa-orphans-'));
  await writeFile(path.join(dir, 'kept.yaml'), `# ${GENERATED_MARK} from a.yaml; do not edit.\n`);
  await writeFile(path.join(dir, 'gone.yaml'), `# ${GENERATED_MARK} from b.yaml; do not edit.\n`);
  await writeFile(path.join(dir, 'mine.yaml'), '# written by hand\n');
  vi.spyOn(console, 'log').mockImplementation(() => {});
  vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

describe('generated files nothing writes any more', () => {
  const generated = () => [{ target: path.join(dir, 'kept.yaml'), text: 'x' }];
  /** The generator's write-or-check step with nothing to write but the orphans of `dir`. */
  const generate = ({ check }: { check: boolean }) =>
    writeGenerated([], {
      check,
      regenerate: 'npm run generate',
      orphans: orphanedFiles(generated(), dir),
    });

  it('are the generated ones no source writes, not hand-written ones', () => {
    expect(orphanedFiles(generated(), dir)).toEqual([path.join(dir, 'gone.yaml')]);
  });

  it('are reported by --check, which writes and removes nothing', async () => {
    expect(await generate({ check: true })).toBe(1);
    expect((await readdir(dir)).sort()).toEqual(['gone.yaml', 'kept.yaml', 'mine.yaml']);
  });

  it('are removed by a generate run', async () => {
    expect(await generate({ check: false })).toBe(0);
    expect((await readdir(dir)).sort()).toEqual(['kept.yaml', 'mine.yaml']);
  });
});
