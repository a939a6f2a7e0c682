/**
 * Writes the generated dashboards to dashboards/*.json.
 *
 *   npx tsx scripts/dashboards/generate.ts          write the files
 *   npx tsx scripts/dashboards/generate.ts --check  write nothing; exit 1 if a file is out of date
 */
import path from 'node:path';
import { DASHBOARDS_DIR, renderAllDashboards } from '../../dashboards/src/index.js';
import { runGenerator, writeGenerated } from '../write-generated.js';

runGenerator(async () =>
  writeGenerated(
    (await renderAllDashboards()).map(({ file, text }) => ({
      target: path.join(DASHBOARDS_DIR, file),
      text,
    })),
    {
      check: process.argv.includes('--check'),
      regenerate: 'npx tsx scripts/dashboards/generate.ts',
    },
  ),
);
