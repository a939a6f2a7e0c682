// Builds the status page into dist/web/: app.ts (with uPlot) bundled and minified into app.js and
// app.css, plus index.html and the icon. Run by `npm run build`; the daemon serves the result.
import { copyFileSync, mkdirSync } from 'node:fs';
import { URL, fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = fileURLToPath(new URL('.', import.meta.url));
const out = fileURLToPath(new URL('../dist/web/', import.meta.url));
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: `${here}app.ts` },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  outdir: out,
  legalComments: 'none',
  logLevel: 'warning',
});
for (const file of ['index.html', 'favicon.svg']) copyFileSync(`${here}${file}`, `${out}${file}`);
