/**
 * Writes the generated Kubernetes files (scripts/deploy/render.ts) into deploy/kubernetes/.
 *
 *   npm run generate:deploy                          write the files
 *   npx tsx scripts/deploy/generate.ts --check       write nothing; exit 1 if a file is stale
 */
import path from 'node:path';
import { runGenerator, writeGenerated } from '../write-generated.js';
import { REGENERATE_COMMAND, REPO_ROOT, renderAll } from './render.js';

runGenerator(async () =>
  writeGenerated(
    (await renderAll()).map(({ file, text }) => ({ target: path.join(REPO_ROOT, file), text })),
    { check: process.argv.includes('--check'), regenerate: REGENERATE_COMMAND },
  ),
);
