/**
 * The build's changes to bundled packages (scripts/build-plugins.mjs), each bundled here the way
 * `npm run build` bundles it and run in a child process: with the plugin, the package does what
 * the daemon needs of it without what the plugin leaves out; without it, the test's probe sees
 * the difference, so the probe can fail.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';
import {
  iconvUnicodeOnly,
  mimeDbSubset,
  REQUIRE_SHIM,
  undiciHttp2Lazy,
} from '../../scripts/build-plugins.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Bundles `program` (an ES module importing packages) with `plugins` and runs it; its stdout. */
async function runBundled(
  program: string,
  plugins: Plugin[],
  env: NodeJS.ProcessEnv = {},
): Promise<string> {
  const out = await build({
    stdin: { contents: program, resolveDir: ROOT, loader: 'js' },
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    logLevel: 'silent',
    banner: { js: REQUIRE_SHIM },
    plugins,
  });
  // On stdin: a bundle of iconv-lite's code pages is longer than an argument may be.
  return execFileSync(process.execPath, ['--input-type=module'], {
    input: out.outputFiles[0]!.text,
    env: { PATH: process.env['PATH'], ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
}

describe('iconvUnicodeOnly', () => {
  const PROGRAM = `
import iconv from 'iconv-lite';
console.log(JSON.stringify({
  utf8: iconv.decode(Buffer.from('{"a":"é"}'), 'utf-8'),
  utf16: iconv.encodingExists('utf-16le'),
  gbk: iconv.encodingExists('gbk'),
  latin2: iconv.encodingExists('iso-8859-2'),
}));`;

  it('keeps the Unicode encodings and leaves out the legacy code pages', async () => {
    const out = JSON.parse((await runBundled(PROGRAM, [iconvUnicodeOnly])).trim()) as object;
    expect(out).toEqual({ utf8: '{"a":"é"}', utf16: true, gbk: false, latin2: false });
    const unpatched = JSON.parse((await runBundled(PROGRAM, [])).trim()) as object;
    expect(unpatched).toMatchObject({ gbk: true, latin2: true });
  });
});

describe('mimeDbSubset', () => {
  /**
   * Every way the servers give a response its type (src/server, src/simulator), and express's own
   * defaults; the Content-Type each one gets, and two lookups outside the subset.
   */
  const PROGRAM = `
import express from 'express';
import mime from 'mime-types';
const app = express();
app.get('/json', (req, res) => res.json({ a: 1 }));
app.get('/html-default', (req, res) => res.send('<p>x</p>'));
app.get('/html', (req, res) => res.type('html').send('<p>x</p>'));
app.get('/text', (req, res) => res.type('text/plain').send('ok'));
app.get('/buffer', (req, res) => res.send(Buffer.from('x')));
app.get('/svg', (req, res) => res.set('Content-Type', 'image/svg+xml').send(Buffer.from('<svg/>')));
app.get('/css', (req, res) => res.set('Content-Type', 'text/css; charset=utf-8').send('a{}'));
app.get('/js', (req, res) => res.set('Content-Type', 'text/javascript').send('1'));
app.get('/metrics', (req, res) => res.set('Content-Type', 'application/openmetrics-text; version=1.0.0; charset=utf-8').send('# EOF'));
app.get('/error', (req, res) => res.status(405).json({ error: 'method not allowed' }));
const server = app.listen(0, '127.0.0.1', async () => {
  const types = {};
  for (const path of ['/json', '/html-default', '/html', '/text', '/buffer', '/svg', '/css', '/js', '/metrics', '/error', '/missing']) {
    const res = await fetch('http://127.0.0.1:' + server.address().port + path);
    types[path] = res.headers.get('content-type');
  }
  console.log(JSON.stringify({ types, mp4: mime.lookup('mp4'), xml: mime.contentType('application/xml') }));
  server.close();
});`;

  it('gives every response the Content-Type the whole table gives', async () => {
    const subset = JSON.parse((await runBundled(PROGRAM, [mimeDbSubset])).trim()) as {
      types: object;
      mp4: unknown;
      xml: unknown;
    };
    const whole = JSON.parse((await runBundled(PROGRAM, [])).trim()) as typeof subset;
    expect(subset.types).toEqual(whole.types);
    expect(subset.types).toMatchObject({
      '/json': 'application/json; charset=utf-8',
      '/html-default': 'text/html; charset=utf-8',
      '/buffer': 'application/octet-stream',
    });
    // The table is the subset: types outside it are unknown to lookups.
    expect(whole.mp4).toBe('video/mp4');
    expect(subset.mp4).toBe(false);
  });
});

describe('undiciHttp2Lazy', () => {
  /**
   * A request through undici's pool, imported as src/api/client.ts imports it (undici's index
   * would load its WebSocket too, which on Node 20 loads Node's own undici and its HTTP/2), and
   * whether node:http2 was loaded for it.
   */
  const PROGRAM = `
import Pool from 'undici/lib/dispatcher/pool.js';
// Not an import: on Node 24 that loads Node's own undici, and with it node:http2.
const { createServer } = require('node:http');
const server = createServer((req, res) => res.end('pong')).listen(0, '127.0.0.1', async () => {
  const pool = new Pool('http://127.0.0.1:' + server.address().port);
  const out = { status: 0, body: '' };
  await new Promise((resolve, reject) => pool.dispatch({ path: '/ping', method: 'GET' }, {
    onConnect() {},
    onHeaders(status) { out.status = status; return true; },
    onData(chunk) { out.body += chunk; return true; },
    onComplete: resolve,
    onError: reject,
  }));
  const http2 = process.moduleLoadList.includes('NativeModule http2');
  console.log(JSON.stringify({ ...out, http2 }));
  await pool.close();
  server.close();
});`;

  it('answers over HTTP/1.1 without loading node:http2', async () => {
    const lazy = JSON.parse((await runBundled(PROGRAM, [undiciHttp2Lazy])).trim()) as object;
    expect(lazy).toEqual({ status: 200, body: 'pong', http2: false });
    const eager = JSON.parse((await runBundled(PROGRAM, [])).trim()) as object;
    expect(eager).toEqual({ status: 200, body: 'pong', http2: true });
  });
});
