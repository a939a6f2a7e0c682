/**
 * `/api/uptime` and the badges (docs/metrics.md): the document, its validation (a bad parameter is
 * a 400 that names it, an unknown environment a 404, never a 500), and badge rendering.
 */
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { scheduledRun } from '../../bench/uptime-store.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import type { CheckResult } from '../../src/kernel/check.js';
import { createServerApp } from '../../src/server/app.js';
import { StatusHistory } from '../../src/server/status.js';
import { percent, renderBadge, type UptimeDocument } from '../../src/server/uptime.js';
import { UptimeStore } from '../../src/server/uptime-store.js';
import { serve, type Served } from './serve.js';

const MIN = 60_000;
const NOW = Date.parse('2026-11-27T12:00:00Z');
const HOSTILE = `a<b>&"c'${'x'.repeat(40)}`;

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

function ping(environment: string, t: number, reason: string | null): CheckResult {
  return scheduledRun('ping', environment, t, 42, reason);
}

async function start(opts: { maintenance?: string[] } = {}) {
  let now = NOW - 3 * 24 * 60 * MIN;
  const store = UptimeStore.memory({ checks: CHECK_LIST, now: () => now });
  // Three days of pings in production: a 10-minute outage 20 hours ago; sandbox has none.
  for (let t = now; t <= NOW; t += MIN) {
    now = t;
    const outage = t >= NOW - 20 * 60 * MIN && t < NOW - 20 * 60 * MIN + 10 * MIN;
    store.record(ping('production', t, outage ? 'server_error' : null));
  }
  store.record(ping(HOSTILE, NOW, 'timeout'));
  const app = createServerApp({
    registry: new Registry(),
    status: new StatusHistory({ checks: CHECK_LIST, environments: ['production', 'sandbox'] }),
    isReady: () => true,
    logger: pino({ enabled: false }),
    uptime: {
      store,
      environments: () =>
        ['production', 'sandbox', HOSTILE].map((name) => ({ name, intervalMs: MIN })),
      inMaintenance: (environment) => (opts.maintenance ?? []).includes(environment),
      now: () => now,
    },
  });
  served = await serve(app);
  return served.url;
}

describe('GET /api/uptime', () => {
  it('answers 90 days, the uptime per window and the incidents, per configured environment', async () => {
    const url = await start();
    const res = await fetch(`${url}/api/uptime`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = (await res.json()) as UptimeDocument;
    expect(doc.check).toBe('ping');
    expect(doc.environments.map((e) => e.environment)).toEqual(['production', 'sandbox', HOSTILE]);
    const production = doc.environments[0];
    expect(production?.days).toHaveLength(90);
    expect(production?.days.at(-1)?.date).toBe('2026-11-27');
    expect(production?.days.at(-2)).toMatchObject({ date: '2026-11-26', runs: 1440, failed: 10 });
    expect(production?.days.at(-2)?.availability).toBeCloseTo(1 - 10 / 1440, 6);
    expect(production?.days[0]).toMatchObject({ runs: 0, availability: null });
    expect(production?.uptime['24h']).toBeCloseTo(1 - 10 / (24 * 60), 2);
    expect(production?.uptime['90d']).toBeCloseTo(1 - 10 / (3 * 1440 + 1), 4);
    expect(production?.incidents).toEqual([
      {
        check: 'ping',
        cause: 'server_error',
        start: new Date(NOW - 20 * 60 * MIN).toISOString(),
        end: new Date(NOW - 20 * 60 * MIN + 10 * MIN).toISOString(),
        duration_seconds: 600,
        ongoing: false,
        failed: 10,
        maintenance: false,
      },
    ]);
    expect(doc.environments[1]?.uptime).toEqual({
      '24h': null,
      '7d': null,
      '30d': null,
      '90d': null,
    });
  });

  it('filters by environment and days', async () => {
    const url = await start();
    const doc = (await (
      await fetch(`${url}/api/uptime?environment=production&days=7`)
    ).json()) as UptimeDocument;
    expect(doc.environments.map((e) => e.environment)).toEqual(['production']);
    expect(doc.environments[0]?.days).toHaveLength(7);
  });

  it('answers a bad parameter with a 400 naming it, an unknown environment with a 404', async () => {
    const url = await start();
    const cases: Array<[string, number, RegExp]> = [
      ['days=0', 400, /days/],
      ['days=91', 400, /days/],
      ['days=7.5', 400, /days/],
      ['days=1e1', 400, /days/],
      ['days=', 400, /days/],
      ['days=-1', 400, /days/],
      ['days=7&days=8', 400, /once/],
      ['env=production', 400, /environment, days/],
      ['environment=staging', 404, /environment/],
      ['environment=', 404, /environment/],
      ['environment[x]=1', 400, /once|unknown/],
      ['environment=%E2%80%AE', 404, /environment/],
    ];
    for (const [query, status, message] of cases) {
      const res = await fetch(`${url}/api/uptime?${query}`);
      expect(res.status, query).toBe(status);
      const body = (await res.json()) as { error: string };
      expect(body.error, query).toMatch(message);
    }
  });
});

describe('the badges', () => {
  it('shows the status in words and colour, as SVG with short caching', async () => {
    const url = await start();
    const res = await fetch(`${url}/badge/production.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=30');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const svg = await res.text();
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('>up</text>');
    expect(svg).toContain('<title>production: up</title>');
    expect(svg).toContain('fill="#1a7f37"');
    expect(await (await fetch(`${url}/badge/sandbox.svg`)).text()).toContain('>no data</text>');
    expect(await (await fetch(`${url}/badge/${encodeURIComponent(HOSTILE)}.svg`)).text()).toContain(
      '>down</text>',
    );
  });

  it('says maintenance during a window', async () => {
    const url = await start({ maintenance: ['production'] });
    expect(await (await fetch(`${url}/badge/production.svg`)).text()).toContain(
      '>maintenance</text>',
    );
  });

  it('shows the uptime of a window, 30 days by default', async () => {
    const url = await start();
    const res = await fetch(`${url}/badge/production/uptime.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    const svg = await res.text();
    expect(svg).toContain('production uptime 30d');
    expect(svg).toContain(`>${percent(1 - 10 / (3 * 1440 + 1))}</text>`);
    const day = await (await fetch(`${url}/badge/production/uptime.svg?window=24h`)).text();
    expect(day).toContain('production uptime 24h');
    expect(await (await fetch(`${url}/badge/sandbox/uptime.svg?window=90d`)).text()).toContain(
      '>no data</text>',
    );
  });

  it('refuses a bad window (400 naming it) and an unknown environment (404)', async () => {
    const url = await start();
    const cases: Array<[string, number, RegExp]> = [
      ['/badge/production/uptime.svg?window=1y', 400, /window/],
      ['/badge/production/uptime.svg?window=30d&window=7d', 400, /once/],
      ['/badge/production/uptime.svg?days=7', 400, /window/],
      ['/badge/production.svg?window=30d', 400, /unknown parameter/],
      ['/badge/staging.svg', 404, /environment/],
      ['/badge/staging/uptime.svg', 404, /environment/],
      ['/badge/%3Cscript%3E.svg', 404, /environment/],
      ['/badge/production.png', 404, /not found/],
      ['/badge/%E0%A4%A.svg', 400, /bad request/],
    ];
    for (const [path, status, message] of cases) {
      const res = await fetch(`${url}${path}`);
      expect(res.status, path).toBe(status);
      expect(((await res.json()) as { error: string }).error, path).toMatch(message);
    }
    const post = await fetch(`${url}/badge/production.svg`, { method: 'POST' });
    expect(post.status).toBe(405);
  });

  it('escapes any environment name and truncates a long one', async () => {
    const url = await start();
    const svg = await (
      await fetch(`${url}/badge/${encodeURIComponent(HOSTILE)}/uptime.svg`)
    ).text();
    expect(svg).not.toContain('<b>');
    expect(svg).toContain('a&lt;b&gt;&amp;&quot;c&apos;');
    // 20 characters shown, the last an ellipsis; the title keeps the whole name.
    expect(svg).toContain(`>a&lt;b&gt;&amp;&quot;c&apos;${'x'.repeat(11)}… uptime 30d</text>`);
    expect(svg).toContain(`<title>a&lt;b&gt;&amp;&quot;c&apos;${'x'.repeat(40)} uptime 30d: `);
    // Every element is closed: as many opening as closing tags (the self-closed rects aside).
    const opened = svg.match(/<(svg|title|g|text)\b/g)?.length;
    expect(svg.match(/<\/(svg|title|g|text)>/g)?.length).toBe(opened);
  });

  it('sizes each half to its text, and rounds uptime down, never up', () => {
    const short = renderBadge('prod', '', 'up', '#000');
    const long = renderBadge('production-eu-west', '', 'maintenance', '#000');
    const width = (svg: string) => Number(/width="(\d+)"/.exec(svg)?.[1]);
    expect(width(long)).toBeGreaterThan(width(short));
    expect(percent(0.99999)).toBe('99.99%');
    expect(percent(1)).toBe('100%');
    expect(percent(null)).toBe('no data');
  });
});
