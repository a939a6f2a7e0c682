// What the daemon's bundles leave out of, or change in, the packages they bundle (scripts/build.mjs):
// each measured in bench/LOG.md ("Memory (2 environments)"), each tested in
// test/build/plugins.test.ts.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

// Bundled CommonJS packages (express, pino, prom-client, undici) call `require` for Node's own
// modules; an ES module has none, so each output file gets one as its banner.
export const REQUIRE_SHIM =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/**
 * zod's namespace `z` re-exports its ~50 translations of error messages (`z.locales`), so a bundle
 * that uses `z` carries them all, and both threads compile them: 3.8 MiB of the daemon's RSS,
 * measured. The daemon uses zod's English messages only (the one locale zod itself installs), so
 * the translations are left out and `z.locales` holds `en` alone.
 */
export const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes('/node_modules/zod/')
        ? { path: 'zod-locales', namespace: 'zod-english-only', pluginData: args.resolveDir }
        : undefined,
    );
    esbuild.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: 'export { default as en } from "../locales/en.js";',
      resolveDir: args.pluginData,
      loader: 'js',
    }));
  },
};

/**
 * iconv-lite (body-parser's decoder) bundles the tables of every legacy code page it can decode:
 * half a megabyte of source text, which the main thread keeps in its heap for the process's life
 * (0.7 MiB of RSS, measured). The daemon's server reads no request bodies, and the simulator reads
 * only JSON, which body-parser accepts in UTF-8, -16 and -32 alone (RFC 7159): so only iconv-lite's
 * Unicode encodings are kept, and nothing that reads a body behaves differently.
 */
export const iconvUnicodeOnly = {
  name: 'iconv-unicode-only',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^\.\.\/encodings$/ }, (args) =>
      args.importer.includes('/node_modules/iconv-lite/lib/')
        ? { path: 'iconv-encodings', namespace: 'iconv-unicode-only', pluginData: args.resolveDir }
        : undefined,
    );
    esbuild.onLoad({ filter: /.*/, namespace: 'iconv-unicode-only' }, (args) => ({
      contents: [
        'const merge = require("../lib/helpers/merge-exports");',
        'merge(module.exports, require("../encodings/internal"));',
        'merge(module.exports, require("../encodings/utf32"));',
        'merge(module.exports, require("../encodings/utf16"));',
        'merge(module.exports, require("../encodings/utf7"));',
      ].join('\n'),
      resolveDir: args.pluginData,
      loader: 'js',
    }));
  },
};

/**
 * The media types the daemon's and the simulator's servers name (a `Content-Type` they set, a
 * `res.type` or `res.send` default express looks up). Any other type is still sent as set; only an
 * extension lookup or a charset default for it would now find nothing.
 */
export const MEDIA_TYPES_KEPT = [
  'application/javascript',
  'application/json',
  'application/octet-stream',
  'image/svg+xml',
  'text/css',
  'text/html',
  'text/javascript',
  'text/plain',
];

/**
 * mime-db (express's table of media types, through mime-types) is 2,500 entries, and express
 * loads it at start-up: 147 KiB of source text and more than half a megabyte of objects in the
 * main thread's heap for the process's life. The bundles keep the entries of `MEDIA_TYPES_KEPT`
 * alone, taken unchanged from mime-db at build time.
 */
export const mimeDbSubset = {
  name: 'mime-db-subset',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^mime-db$/ }, (args) => ({
      path: createRequire(args.importer).resolve('mime-db/db.json'),
      namespace: 'mime-db-subset',
    }));
    esbuild.onLoad({ filter: /.*/, namespace: 'mime-db-subset' }, async (args) => {
      const db = JSON.parse(await readFile(args.path, 'utf8'));
      const kept = Object.fromEntries(MEDIA_TYPES_KEPT.map((type) => [type, db[type]]));
      const missing = MEDIA_TYPES_KEPT.filter((type) => db[type] === undefined);
      if (missing.length > 0)
        throw new Error(`mime-db-subset: ${missing.join(', ')} not in mime-db`);
      return { contents: `module.exports = ${JSON.stringify(kept)};`, loader: 'js' };
    });
  },
};

/** What undici's HTTP/2 client (`lib/dispatcher/client-h2.js`) loads `node:http2` for at once. */
const UNDICI_HTTP2_REQUIRE = `try {
  http2 = require('node:http2')
} catch {`;

/**
 * undici's HTTP/2 client loads `node:http2` when the module loads, for its header-name constants,
 * so every client that bundles undici holds Node's HTTP/2 implementation: 10 MiB of RSS on Node
 * 24, measured (bench/README.md, "Node 24: where the memory goes"). The monitor never speaks
 * HTTP/2 (no `allowH2`), so the bundle gives the module the constants it reads, taken from this
 * Node at build time, and loads `node:http2` only if a session is ever opened. A newer undici that
 * loads it differently fails the build here rather than quietly holding it again.
 */
export const undiciHttp2Lazy = {
  name: 'undici-http2-lazy',
  setup(esbuild) {
    esbuild.onLoad(
      { filter: /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client-h2\.js$/ },
      async (args) => {
        const source = await readFile(args.path, 'utf8');
        if (!source.includes(UNDICI_HTTP2_REQUIRE))
          throw new Error(`undici-http2-lazy: ${args.path} no longer loads node:http2 as expected`);
        const { constants } = createRequire(import.meta.url)('node:http2');
        const lazy = [
          'try {',
          `  http2 = { constants: ${JSON.stringify(constants)}, connect: (...a) => require('node:http2').connect(...a) }`,
          '} catch {',
        ].join('\n');
        return { contents: source.replace(UNDICI_HTTP2_REQUIRE, lazy), loader: 'js' };
      },
    );
  },
};
