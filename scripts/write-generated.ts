/**
 * The write-or-check loop every generator shares: writes each generated file that differs from
 * the committed one and removes generated files nothing writes any more (a check's scenarios
 * that left with the check), or with `check` writes nothing and reports both.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface GeneratedText {
  /** Absolute path of the committed file. */
  target: string;
  text: string;
}

/**
 * Returns the process exit code: 1 when `check` found a stale file, else 0. `orphans` are
 * absolute paths of generated files that no longer have a source.
 */
export async function writeGenerated(
  files: readonly GeneratedText[],
  opts: { check: boolean; regenerate: string; orphans?: readonly string[] },
): Promise<number> {
  let stale = 0;
  for (const target of opts.orphans ?? []) {
    const shown = path.relative(process.cwd(), target);
    if (opts.check) {
      console.error(`out of date: ${shown} (nothing generates it any more)`);
      stale += 1;
    } else {
      await rm(target, { force: true });
      console.log(`removed ${shown}`);
    }
  }
  for (const { target, text } of files) {
    const shown = path.relative(process.cwd(), target);
    const current = await readFile(target, 'utf8').catch(() => undefined);
    if (current === text) {
      console.log(`unchanged ${shown}`);
    } else if (opts.check) {
      console.error(`out of date: ${shown}`);
      stale += 1;
    } else {
      await writeFile(target, text);
      console.log(`wrote ${shown}`);
    }
  }
  if (stale > 0) console.error(`Regenerate with: ${opts.regenerate}`);
  return stale > 0 ? 1 : 0;
}

/** Runs a generator's main and turns its result or error into the process exit code. */
export function runGenerator(main: () => Promise<number>): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
