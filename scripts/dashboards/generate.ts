/**
 * Writes the generated dashboards to dashboards/*.json.
 *
 *   npx tsx scripts/dashboards/generate.ts          write the files
 *   npx tsx scripts/dashboards/generate.ts --check  write nothing; exit 1 if a file is out of date
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DASHBOARDS_DIR, renderAllDashboards } from '../../dashboards/src/index.js';

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const { file, text } of await renderAllDashboards()) {
    const target = path.join(DASHBOARDS_DIR, file);
    const current = await readFile(target, 'utf8').catch(() => undefined);
    if (current === text) {
      console.log(`unchanged ${path.relative(process.cwd(), target)}`);
      continue;
    }
    if (check) {
      console.error(`out of date: ${path.relative(process.cwd(), target)}`);
      stale += 1;
      continue;
    }
    await writeFile(target, text);
    console.log(`wrote ${path.relative(process.cwd(), target)}`);
  }
  if (stale > 0) {
    console.error('Regenerate with: npx tsx scripts/dashboards/generate.ts');
    return 1;
  }
  return 0;
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
