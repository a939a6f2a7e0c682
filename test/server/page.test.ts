/**
 * The status page's serving: the built files at `/`, `/status` and `/assets/`, the security
 * headers on every answer, gzip, and `/api/history` with its filters.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createServerApp } from '../../src/server/app.js';
import { RunHistory } from '../../src/server/history.js';
import { StatusHistory } from '../../src/server/status.js';
import { pingResult } from '../metrics/fixtures.js';
import { serve, type Served } from './serve.js';
import { CHECK_LIST } from '../../src/checks/index.js';

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

async function webRoot(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'isa-web-'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>page</title>');
  await writeFile(join(dir, 'app.js'), `console.log(${JSON.stringify('x'.repeat(5000))});`);
  await writeFile(join(dir, 'app.css'), 'body{}');
  await writeFile(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  return dir;
}

async function start(root: string): Promise<string> {
  const history = new RunHistory({
    checks: CHECK_LIST,
    windowMs: 3_600_000,
    runs: 10,
    environments: ['production', 'sandbox'].map((name) => ({
      name,
      thresholds: { expectedMs: 100, warningMs: 500, criticalMs: 1000 },
      checks: [{ name: 'ping', enabled: true, intervalMs: 60_000 }],
    })),
  });
  for (let i = 0; i < 30; i++) history.add(pingResult('ok', { startedAt: Date.now() - i }));
  served = await serve(
    createServerApp({
      registry: new Registry(),
      status: new StatusHistory({ checks: CHECK_LIST }),
      history,
      isReady: () => true,
      webRoot: root,
    }),
  );
  return served.url;
}

describe('the status page', () => {
  it('is served at / and /status with a strict CSP, nosniff and no framing', async () => {
    const url = await start(await webRoot());
    for (const path of ['/', '/status']) {
      const res = await fetch(`${url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toContain('<title>page</title>');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    }
  });

  it('serves its assets with their types, gzipped when asked, and nothing else', async () => {
    const url = await start(await webRoot());
    const js = await fetch(`${url}/assets/app.js`, { headers: { 'Accept-Encoding': 'identity' } });
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('content-encoding')).toBeNull();
    const css = await fetch(`${url}/assets/app.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    // fetch decodes gzip itself; the header says it was sent compressed.
    expect(css.headers.get('content-encoding')).toBe('gzip');
    for (const path of ['/assets/index.html', '/assets/..%2fpackage.json', '/assets/x.js']) {
      expect((await fetch(`${url}${path}`)).status, path).toBe(404);
    }
    expect((await fetch(`${url}/assets/app.js`, { method: 'POST' })).status).toBe(405);
  });

  it('answers 503 with how to build it when the page was not built', async () => {
    const url = await start(join(tmpdir(), 'isa-no-such-web-root'));
    const res = await fetch(`${url}/`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build');
  });
});

describe('GET /api/history', () => {
  it('filters by environment and check and answers increments after a sequence number', async () => {
    const url = await start(await webRoot());
    const all = (await (await fetch(`${url}/api/history`)).json()) as {
      seq: number;
      environments: Record<string, unknown>;
    };
    expect(all.seq).toBe(30);
    expect(Object.keys(all.environments)).toEqual(['production', 'sandbox']);
    const one = (await (
      await fetch(`${url}/api/history?environment=production&check=ping&after=25&limit=2`)
    ).json()) as {
      environments: Record<string, { checks: Record<string, { samples: Array<{ seq: number }> }> }>;
    };
    expect(Object.keys(one.environments)).toEqual(['production']);
    expect(one.environments['production']?.checks['ping']?.samples.map((s) => s.seq)).toEqual([
      29, 30,
    ]);
  });

  it('gzips a large answer for a client that accepts it', async () => {
    const url = await start(await webRoot());
    const { request } = await import('node:http');
    const body = await new Promise<{ encoding: string | undefined; json: unknown }>(
      (resolve, reject) => {
        request(`${url}/api/history`, { headers: { 'Accept-Encoding': 'gzip' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              encoding: res.headers['content-encoding'],
              json: JSON.parse(gunzipSync(Buffer.concat(chunks)).toString('utf8')),
            }),
          );
        })
          .on('error', reject)
          .end();
      },
    );
    expect(body.encoding).toBe('gzip');
    expect(body.json).toMatchObject({ seq: 30 });
  });

  it('refuses unknown names and malformed numbers without echoing them', async () => {
    const url = await start(await webRoot());
    const cases: Array<[string, number]> = [
      ['environment=<script>', 404],
      ['check=nope', 404],
      ['after=-1', 400],
      ['after=1e3', 400],
      ['limit=0', 400],
      ['limit=5001', 400],
      ['environment=production&environment=sandbox', 400],
    ];
    for (const [query, status] of cases) {
      const res = await fetch(`${url}/api/history?${query}`);
      expect(res.status, query).toBe(status);
      const text = await res.text();
      expect(text, query).not.toContain('<script>');
      expect(text, query).not.toContain('nope');
    }
  });
});
