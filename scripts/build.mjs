// Bundles the daemon into dist/ with esbuild, so that each thread compiles a few files instead of
// the hundreds of modules of src/ and node_modules/ (bench/LOG.md, "Memory (2 environments)").
//   dist/cli.js          the command line and the main thread; each command, the inline engine and
//                        demo mode are chunks of their own, loaded only when they run
//   dist/worker.js       the measurement worker, one file (measurement/host.ts starts it)
//   dist/healthcheck.js  the container's HEALTHCHECK
// Whitespace and syntax are minified, identifiers are not: a stack trace still names our functions
// (`node --enable-source-maps` maps it to src/ with the .map files beside each output).
import { readFileSync, rmSync } from 'node:fs';
import { URL, fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import {
  iconvUnicodeOnly,
  mimeDbSubset,
  REQUIRE_SHIM,
  undiciHttp2Lazy,
  zodEnglishOnly,
} from './build-plugins.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist`;
/**
 * What the bundle leaves to node_modules/ is exactly package.json's `dependencies` (pino-pretty:
 * loaded from there only when stdout is a terminal, `logging.ts`); every other package is bundled
 * and so a devDependency. The image installs `dependencies` alone (docs/deploy.md).
 */
const { dependencies = {} } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: ['node20'],
  outdir,
  sourcemap: true,
  minifyWhitespace: true,
  minifySyntax: true,
  // Not `keepNames`: identifiers are not minified, so functions keep their names anyway, and its
  // `__name(fn, "…")` call for every function cost 5 MiB of RSS (bench/README.md).
  banner: { js: REQUIRE_SHIM },
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [zodEnglishOnly, iconvUnicodeOnly, mimeDbSubset, undiciHttp2Lazy],
  external: Object.keys(dependencies),
};

// Files of an earlier build (other chunk names, the former one-file-per-module layout) go.
rmSync(outdir, { recursive: true, force: true });
await Promise.all([
  build({
    ...common,
    entryPoints: { cli: 'src/cli.ts', healthcheck: 'src/healthcheck.ts' },
    splitting: true,
    // Chunks stay in dist/ itself: modules find package.json and dist/web/ relative to their own
    // file (version.ts, server/page.ts), which must be the same directory for every output file.
    chunkNames: '[name]-[hash]',
  }),
  build({ ...common, entryPoints: { worker: 'src/measurement/worker.ts' } }),
]);
