import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DASHBOARDS, DASHBOARDS_DIR, renderAllDashboards } from '../../dashboards/src/index.js';

const REGENERATE = 'Regenerate with: npm run generate';

describe('committed dashboard JSON', () => {
  it('is exactly what the TypeScript sources generate', async () => {
    for (const { file, text } of await renderAllDashboards()) {
      const committed = await readFile(path.join(DASHBOARDS_DIR, file), 'utf8').catch(() => '');
      expect(
        committed,
        `dashboards/${file} is out of date with dashboards/src. ${REGENERATE}`,
      ).toBe(text);
    }
  });

  it('has no JSON file the generator does not produce', async () => {
    const onDisk = (await readdir(DASHBOARDS_DIR)).filter((name) => name.endsWith('.json')).sort();
    const generated = DASHBOARDS.map(({ file }) => file).sort();
    expect(onDisk, `stray or missing dashboard files in dashboards/. ${REGENERATE}`).toEqual(
      generated,
    );
  });

  it('renders deterministically, with a trailing newline', async () => {
    const first = await renderAllDashboards();
    const second = await renderAllDashboards();
    expect(second).toEqual(first);
    for (const { text } of first) expect(text.endsWith('}\n')).toBe(true);
  });
});
