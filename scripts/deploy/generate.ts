/**
 * Writes the generated Kubernetes files (scripts/deploy/render.ts) into deploy/kubernetes/.
 *
 *   npm run generate:deploy                          write the files
 *   npx tsx scripts/deploy/generate.ts --check       write nothing; exit 1 if a file is stale
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REGENERATE_COMMAND, REPO_ROOT, renderAll } from './render.js';

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const { file, text } of await renderAll()) {
    const target = path.join(REPO_ROOT, file);
    const current = await readFile(target, 'utf8').catch(() => undefined);
    if (current === text) {
      console.log(`unchanged ${file}`);
    } else if (check) {
      console.error(`out of date: ${file}`);
      stale += 1;
    } else {
      await writeFile(target, text);
      console.log(`wrote ${file}`);
    }
  }
  if (stale > 0) console.error(`Regenerate with: ${REGENERATE_COMMAND}`);
  return stale > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
