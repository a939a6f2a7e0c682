import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REGENERATE_COMMAND, REPO_ROOT, renderAll } from '../../scripts/deploy/render.js';
import { readKustomization } from './manifests.js';

describe('generated Kubernetes files', () => {
  it('are exactly what the generator produces from the rules and dashboards', async () => {
    for (const { file, text } of await renderAll()) {
      const committed = await readFile(path.join(REPO_ROOT, file), 'utf8').catch(() => '');
      expect(committed, `${file} is stale. Regenerate with: ${REGENERATE_COMMAND}`).toBe(text);
    }
  });

  it('are listed in the base kustomization', async () => {
    const base = readKustomization(path.join(REPO_ROOT, 'deploy/kubernetes/base'));
    for (const { file } of await renderAll()) {
      expect(base.resources).toContain(path.basename(file));
    }
  });
});
