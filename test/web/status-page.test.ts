/// <reference lib="dom" />
/**
 * The status page in a real browser (Debian's chromium through playwright-core): the simulator
 * and the daemon on loopback, the page as a user opens it. Screenshots at 1280 and 390 px (light
 * and dark) go to test-results/screenshots/.
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfigDocument } from '../../src/config/index.js';
import { startDaemon, type Daemon } from '../../src/daemon.js';
import type { HistoryDocument } from '../../src/server/history.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { launchChromium, type RunningBrowser } from '../support/browser.js';
import { eventually } from '../support/cli.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { uptimeStorePath } from '../../src/server/uptime-store.js';
import type { UptimeDocument } from '../../src/server/uptime.js';
import { simulatedSize } from '../../bench/uptime-store.js';
import { percent } from '../../web/format.js';

const KEY = 'page-key-0f1e2d3c4b5a6978';
const SHOTS = 'test-results/screenshots';
/** A badge is 20 px high and about 200 wide, at the top left of its tab. */
const BADGE_CLIP = { x: 0, y: 0, width: 240, height: 24 };
/** The page polls every second here (`?refresh=1`); the demo and users get 5 s. */
const REFRESH_MS = 1000;
/**
 * The most one refresh may weigh here (2 environments, 1 s pings, 1 s refresh; headers and gzipped
 * body): about 1.8 KB measured, most of it the fixed part of the document.
 */
const PER_REFRESH_BUDGET_BYTES = 3_000;

/** What a hostile API could put in an error body: markup, attribute breakers, controls, length. */
const HOSTILE_MESSAGE =
  `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> "'><b>bold</b> ` +
  `\u202Eevil\u202C \u200Bhidden ${'A'.repeat(400)}`;
const HOSTILE_ID = `"><svg onload=window.__pwned=3>\u202E${'9'.repeat(300)}`;
/** Production is inside a fixed maintenance window for the whole test; sandbox has one ahead. */
const STARTED = Date.now();
const WINDOW_END = new Date(STARTED + 2 * 3_600_000).toISOString();
const PLANNED_START = new Date(STARTED + 5 * 3_600_000).toISOString();
const PLANNED_END = new Date(STARTED + 6 * 3_600_000).toISOString();
const MAINTENANCE: Record<string, unknown[]> = {
  production: [
    {
      start: new Date(STARTED - 600_000).toISOString(),
      end: WINDOW_END,
      reason: 'Database migration <b>OPS-1234</b>',
    },
  ],
  sandbox: [{ start: PLANNED_START, end: PLANNED_END, reason: 'Certificate rotation' }],
};

let sim: RunningSimulator;
let daemon: Daemon;
let chromium: RunningBrowser;
let page: Page;
const problems: string[] = [];
const transferred: Array<{ url: string; bytes: number }> = [];

beforeAll(async () => {
  // The page as `npm run build` makes it (fast: one esbuild bundle).
  await promisify(execFile)(process.execPath, ['web/build.mjs']);
  await mkdir(SHOTS, { recursive: true });
  sim = await startSimulator({ apiKeys: [KEY], qualifyDelayMs: 150 });
  // Sandbox's session reads fail with hostile text, so its failures show it.
  sim.faults.add({
    environment: 'sandbox',
    endpoint: 'get_session',
    count: 3,
    fault: { kind: 'status', status: 500, message: HOSTILE_MESSAGE, requestId: HOSTILE_ID },
  });
  const loaded = validateConfigDocument(
    {
      listen: { host: '127.0.0.1', port: 0 },
      state_file: `${process.env['TMPDIR'] ?? '/tmp'}/isa-page-${process.pid}/sessions.json`,
      shutdown_timeout: '3s',
      environments: ['sandbox', 'production'].map((name) => ({
        name,
        base_url: `${sim.url}/env/${name}`,
        api_key_env: 'PAGE_KEY',
        request_budget_per_second: 20,
        // Scaled down so a critical ping still answers inside a 1 s ping interval.
        thresholds: { expected: '100ms', warning: '250ms', critical: '400ms' },
        ping: { interval: '1s', timeout: '900ms' },
        maintenance: MAINTENANCE[name],
        lifecycle: {
          interval: '2s',
          timeout: '1800ms',
          poll_interval: '100ms',
          poll_timeout: '1s',
          addresses: [{ street1: '2 Pending Ave', zip: '80202', expect: 'available' }],
        },
      })),
    },
    { checks: CHECK_LIST, env: { PAGE_KEY: KEY } },
  );
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  // 90 days of record from an earlier run of the daemon: this start is a restart.
  await simulatedSize(uptimeStorePath(loaded.config.stateFile), {
    environments: ['sandbox', 'production'],
    days: 90,
    now: STARTED - 60_000,
  });
  daemon = await startDaemon({
    checks: CHECK_LIST,
    config: loaded.config,
    logger: pino({ enabled: false }),
    build: { version: 'test', revision: 'test', nodejs: process.version },
  });
  chromium = await launchChromium();
  page = await chromium.context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => {
    // Hiding the tab aborts a poll on purpose; nothing else may fail.
    if (req.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed: ${req.url()}`);
  });
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
  });
  page.on('requestfinished', (req) => {
    void req
      .sizes()
      .then((s) =>
        transferred.push({ url: req.url(), bytes: s.responseBodySize + s.responseHeadersSize }),
      );
  });
  await page.setViewportSize({ width: 1280, height: 900 });
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await daemon?.stop();
  await sim?.close();
});

const env = (name: string) => page.locator(`section[data-environment="${name}"]`);

async function historyPings(
  environment: string,
): Promise<Array<{ summary: Record<string, string | null> }>> {
  const doc = (await (
    await fetch(`${daemon.url}/api/history?environment=${environment}`)
  ).json()) as {
    environments: Record<
      string,
      { checks: Record<string, { samples: Array<{ summary: Record<string, string | null> }> }> }
    >;
  };
  const checks = doc.environments[environment]?.checks ?? {};
  // The chart's check: the one whose samples carry a latency class.
  return (
    Object.values(checks).find((c) => c.samples.some((s) => 'latency_class' in s.summary))
      ?.samples ?? []
  );
}

describe('the status page', () => {
  it('loads both environments with no console errors and no failed requests', async () => {
    await page.goto(`${daemon.url}/?refresh=${REFRESH_MS / 1000}`);
    for (const name of ['sandbox', 'production']) {
      await env(name).locator('[data-testid="up"][data-state="up"]').waitFor();
      await env(name).locator('[data-testid="run"]').first().waitFor();
    }
    await expect(page.title()).resolves.toContain('ISA API status');
    expect(await page.locator('h1').count()).toBe(1);
    expect(await page.locator('h2').allTextContents()).toEqual(['sandbox', 'production']);
    expect(await page.locator('main').count()).toBe(1);
    expect(problems).toEqual([]);
  });

  it("shows an environment's active maintenance window with its reason and end, and a planned one", async () => {
    const banner = env('production').locator('[data-testid="maintenance"]');
    await banner.locator('time').waitFor();
    expect(await banner.getAttribute('data-state')).toBe('active');
    expect(await banner.getAttribute('role')).toBe('status');
    expect(await banner.locator('time').getAttribute('datetime')).toBe(WINDOW_END);
    const shown = await banner.textContent();
    expect(shown).toContain('Maintenance until ');
    // The reason is text: its markup is shown, never interpreted.
    expect(shown).toContain('Database migration <b>OPS-1234</b>');
    expect(await banner.locator('b').count()).toBe(0);
    const planned = env('sandbox').locator('[data-testid="maintenance"]');
    expect(await planned.getAttribute('data-state')).toBe('upcoming');
    expect(
      await planned.locator('time').evaluateAll((t) => t.map((n) => n.getAttribute('datetime'))),
    ).toEqual([PLANNED_START, PLANNED_END]);
    expect(await planned.textContent()).toContain('Certificate rotation');
    const status = (await (await fetch(`${daemon.url}/api/status?limit=1`)).json()) as {
      maintenance: Record<string, unknown>;
    };
    expect(status.maintenance['production']).toEqual({
      state: 'active',
      reason: 'Database migration <b>OPS-1234</b>',
      start: new Date(STARTED - 600_000).toISOString(),
      end: WINDOW_END,
    });
    expect(status.maintenance['sandbox']).toMatchObject({
      state: 'upcoming',
      start: PLANNED_START,
    });
    const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
    expect(metrics).toMatch(/^isa_maintenance_active\{environment="production"\} 1$/m);
    expect(metrics).toMatch(/^isa_maintenance_active\{environment="sandbox"\} 0$/m);
    await env('production').screenshot({ path: `${SHOTS}/status-maintenance-1280.png` });
  });

  it('renders a row for every check of the registry', async () => {
    const doc = (await (await fetch(`${daemon.url}/api/history`)).json()) as {
      checks: Array<{ name: string }>;
    };
    const rows = await env('production')
      .locator('[data-testid="checks"] tbody tr')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-check')));
    expect(rows).toEqual(doc.checks.map((c) => c.name));
  });

  it('turns an environment critical within one refresh of a latency fault, and back on recovery', async () => {
    const production = env('production');
    const fault = sim.faults.add({
      environment: 'production',
      endpoint: 'ping',
      fault: { kind: 'latency', ms: 550 },
    });
    await eventually(
      async () =>
        (await historyPings('production')).at(-1)?.summary['latency_class'] === 'critical',
      20_000,
      'a critical ping in the history',
    );
    await production
      .locator('[data-testid="latency-class"][data-class="critical"]')
      .waitFor({ timeout: REFRESH_MS + 4000 });
    expect(
      await env('sandbox').locator('[data-testid="latency-class"]').getAttribute('data-class'),
    ).not.toBe('critical');
    await page.screenshot({ path: `${SHOTS}/status-critical-1280.png`, fullPage: true });
    // The README's picture (docs/status-page.png): one environment, its 90 days and its panels.
    await production.screenshot({ path: `${SHOTS}/status-production-critical-1280.png` });

    sim.faults.remove(fault);
    await eventually(
      async () =>
        (await historyPings('production')).at(-1)?.summary['latency_class'] === 'expected',
      20_000,
      'a recovered ping in the history',
    );
    await production
      .locator('[data-testid="latency-class"][data-class="expected"]')
      .waitFor({ timeout: REFRESH_MS + 4000 });
    await production.locator('[data-testid="up"][data-state="up"]').waitFor();
  });

  it('expands a run to its step trace, by mouse and by keyboard', async () => {
    const production = env('production');
    const run = production.locator('[data-testid="run"]').last();
    await run.click();
    const trace = production.locator('[data-testid="trace"]').first();
    await trace.locator('tbody tr').first().waitFor();
    const steps = await trace.locator('tbody tr td:first-child').allTextContents();
    expect(steps.length).toBeGreaterThanOrEqual(4);
    expect(steps[0]).toBe('create');
    expect(await trace.locator('th').allTextContents()).toEqual([
      'step',
      'method',
      'path',
      'status',
      'duration',
      'request_id',
      'error',
    ]);
    // Collapse with the keyboard: the focus survives the refreshes in between.
    const expanded = production.locator('[data-testid="run"][aria-expanded="true"]');
    await expanded.focus();
    await page.keyboard.press('Enter');
    await production
      .locator('[data-testid="run"][aria-expanded="true"]')
      .waitFor({ state: 'detached' });
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'run');
  });

  it('shows hostile strings from the API as inert text', async () => {
    const sandbox = env('sandbox');
    // The failure list shows the failing step's error and request_id.
    const failure = sandbox.locator('[data-testid="failures"] li', { hasText: 'onerror' }).first();
    await failure.waitFor();
    const shown = await failure.textContent();
    expect(shown).toContain('<script>window.__pwned=1</script>');
    expect(shown).toContain('<svg onload=window.__pwned=3>');
    // Direction and invisible characters are shown, not obeyed.
    expect(shown).toContain('⟨U+202E⟩');
    expect(shown).toContain('⟨U+200B⟩');
    expect(shown).not.toContain('\u202E');
    // The failed run's trace too (on a loaded machine other runs may fail too: find the one).
    const failed = sandbox.locator('[data-testid="run"].fail');
    let ids: string[] = [];
    for (let i = 0; i < (await failed.count()); i++) {
      await failed.nth(i).click();
      await sandbox.locator('[data-testid="trace"] tbody tr').first().waitFor();
      ids = await sandbox.locator('[data-testid="request-id"]').allTextContents();
      if (ids.some((id) => id.includes('"><svg onload='))) break;
    }
    expect(ids.some((id) => id.includes('"><svg onload='))).toBe(true);
    const injected = await page.evaluate(() => ({
      pwned: (window as unknown as { __pwned?: number }).__pwned ?? null,
      scripts: document.scripts.length,
      images: document.images.length,
      svgs: document.querySelectorAll('main svg').length,
      bold: document.querySelectorAll('main b').length,
    }));
    expect(injected).toEqual({ pwned: null, scripts: 1, images: 0, svgs: 0, bold: 0 });
    await page.screenshot({ path: `${SHOTS}/status-1280.png`, fullPage: true });
  });

  it('shows the 90-day record after a restart: cells, figures as /api/uptime, hover and focus', async () => {
    // The figures of the page's own fetch: live pings change today's while the test reads.
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/uptime');
    await page.reload();
    const doc = (await (await answered).json()) as UptimeDocument;
    for (const name of ['sandbox', 'production']) {
      const record = doc.environments.find((e) => e.environment === name);
      const card = env(name).locator('[data-testid="uptime"]');
      await card.locator('[data-testid="day"]').first().waitFor();
      const cells = await card.locator('[data-testid="day"]').evaluateAll((buttons) =>
        buttons.map((b) => ({
          date: b.getAttribute('data-date'),
          runs: Number(b.getAttribute('data-runs')),
          failed: Number(b.getAttribute('data-failed')),
          availability: b.getAttribute('data-availability'),
        })),
      );
      expect(cells).toHaveLength(90);
      expect(cells).toEqual(
        record?.days.map((d) => ({
          date: d.date,
          runs: d.runs,
          failed: d.failed,
          availability: d.availability === null ? '' : String(d.availability),
        })),
      );
      // The seeded quarter is full: every day but today's has its runs.
      expect(cells.slice(0, -1).every((c) => c.runs > 0)).toBe(true);
      const windows = await card
        .locator('[data-window]')
        .evaluateAll((dds) => dds.map((dd) => [dd.getAttribute('data-window'), dd.textContent]));
      expect(windows).toEqual(
        (['24h', '7d', '30d', '90d'] as const).map((w) => [w, percent(record?.uptime[w] ?? null)]),
      );
      // Incidents, the latest first, with cause and duration.
      const incidents = card.locator('[data-testid="incident"]');
      expect(await incidents.count()).toBe(Math.min(10, record?.incidents.length ?? 0));
      if ((record?.incidents.length ?? 0) > 0) {
        const first = record?.incidents[0];
        expect(await incidents.first().textContent()).toContain(first?.cause);
        expect(await incidents.first().locator('time').getAttribute('datetime')).toBe(first?.start);
      }
    }
    const card = env('production').locator('[data-testid="uptime"]');
    const detail = card.locator('[data-testid="day-detail"]');
    // Hover: the day's figures below the strip.
    const tenth = card.locator('[data-testid="day"]').nth(9);
    await tenth.hover();
    const label = await tenth.getAttribute('aria-label');
    expect(label).toMatch(/available · \d+ ping runs, \d+ failed · p50 \d+ ms, p95 \d+ ms$/);
    expect(await detail.textContent()).toBe(label);
    // Keyboard: one tab stop for the strip, the arrow keys move along it.
    expect(await card.locator('[data-testid="day"][tabindex="0"]').count()).toBe(1);
    await card.locator('[data-testid="day"][tabindex="0"]').focus();
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowRight');
    const second = card.locator('[data-testid="day"]').nth(1);
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'day');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-date'))).toBe(
      await second.getAttribute('data-date'),
    );
    expect(await detail.textContent()).toBe(await second.getAttribute('aria-label'));
    await page.mouse.move(0, 0);
    await card.screenshot({ path: `${SHOTS}/status-uptime-1280.png` });
    await page.setViewportSize({ width: 390, height: 844 });
    await card.screenshot({ path: `${SHOTS}/status-uptime-390.png` });
    await page.setViewportSize({ width: 1280, height: 900 });
    // The badges the record also feeds.
    const badge = await fetch(`${daemon.url}/badge/production/uptime.svg?window=90d`);
    expect(badge.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    const shown = await chromium.context.newPage();
    await shown.goto(`${daemon.url}/badge/production/uptime.svg?window=90d`);
    await shown.screenshot({ path: `${SHOTS}/badge-uptime.png`, clip: BADGE_CLIP });
    await shown.goto(`${daemon.url}/badge/sandbox.svg`);
    await shown.screenshot({ path: `${SHOTS}/badge-status.png`, clip: BADGE_CLIP });
    await shown.close();
    expect(problems).toEqual([]);
  });

  it('fits 390 px without horizontal scrolling, in light and dark', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForFunction(
      () => document.documentElement.scrollWidth <= document.documentElement.clientWidth,
    );
    const widths = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }));
    expect(widths.scroll).toBeLessThanOrEqual(widths.client);
    await page.screenshot({ path: `${SHOTS}/status-390.png`, fullPage: true });
    await env('production').screenshot({ path: `${SHOTS}/status-maintenance-390.png` });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: `${SHOTS}/status-390-dark.png`, fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: `${SHOTS}/status-1280-dark.png`, fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('stops polling while the tab is hidden', async () => {
    // Polls are counted in the page, as it calls fetch, with the visibility at that moment. The
    // test's network events are not: a poll that finished (or was aborted) as the tab was hidden
    // can reach them after the hide, and read as a poll made while hidden.
    type Counted = { hidden: number; visible: number };
    await page.evaluate(() => {
      const w = window as unknown as { polls: Counted; unwrappedFetch: typeof fetch };
      w.polls = { hidden: 0, visible: 0 };
      w.unwrappedFetch = window.fetch;
      window.fetch = (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        if (url.includes('api/history')) {
          w.polls[document.visibilityState === 'visible' ? 'visible' : 'hidden'] += 1;
        }
        return w.unwrappedFetch.call(window, input, init);
      };
      Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    const counted = () => page.evaluate(() => (window as unknown as { polls: Counted }).polls);
    // Three refresh periods pass in the page's own clock (a timer in the page, not a test sleep).
    await page.evaluate((ms) => new Promise((r) => setTimeout(r, ms)), REFRESH_MS * 3);
    expect(await counted()).toEqual({ hidden: 0, visible: 0 });
    await page.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    // The count sees the page's polls: the one made on coming back is counted.
    await eventually(
      async () => (await counted()).visible > 0,
      10_000,
      'a poll after the tab is visible again',
    );
    expect((await counted()).hidden).toBe(0);
    await page.evaluate(() => {
      const w = window as unknown as { unwrappedFetch: typeof fetch };
      window.fetch = w.unwrappedFetch;
    });
    expect(problems).toEqual([]);
  });

  it('reports the page weight: first load and per refresh', async () => {
    const fresh = await chromium.context.newPage();
    const sizes: Array<{ url: string; bytes: number }> = [];
    fresh.on('requestfinished', (req) => {
      void req
        .sizes()
        .then((s) =>
          sizes.push({ url: req.url(), bytes: s.responseBodySize + s.responseHeadersSize }),
        );
    });
    // What each refresh carried: its cursor, the newest sequence number it answers with (the next
    // cursor), the sequence numbers of its samples and runs and the environments they are of.
    const increments: Array<{ after: number; seq: number; seqs: number[]; fed: string[] }> = [];
    const reading: Array<Promise<void>> = [];
    fresh.on('response', (response) => {
      const after = new URL(response.url()).searchParams.get('after');
      if (after === null) return;
      const read = (response.json() as Promise<HistoryDocument>).then((doc) =>
        increments.push({
          after: Number(after),
          seq: doc.seq,
          seqs: Object.values(doc.environments).flatMap((env) =>
            Object.values(env.checks).flatMap((check) => [
              ...check.samples.map((sample) => sample.seq),
              ...check.runs.map((run) => run.seq),
            ]),
          ),
          fed: Object.entries(doc.environments)
            .filter(([, env]) => Object.values(env.checks).some((check) => check.runs.length > 0))
            .map(([name]) => name),
        }),
      );
      // A refresh still arriving as the page closes goes unread (the count below still needs 3).
      reading.push(
        read.then(
          () => {},
          () => {},
        ),
      );
    });
    await fresh.goto(`${daemon.url}/?refresh=${REFRESH_MS / 1000}`);
    await fresh.locator('[data-testid="run"]').first().waitFor();
    await eventually(
      () => sizes.filter((s) => s.url.includes('/api/history?after=')).length >= 3,
      15_000,
      'three refreshes',
    );
    await Promise.all(reading);
    await fresh.close();
    const first = sizes.filter((s) => !s.url.includes('?after='));
    const refreshes = sizes.filter((s) => s.url.includes('?after='));
    const firstBytes = first.reduce((sum, s) => sum + s.bytes, 0);
    const perRefresh = refreshes.reduce((sum, s) => sum + s.bytes, 0) / refreshes.length;
    console.log(
      `status page weight: first load ${firstBytes} bytes in ${first.length} requests ` +
        `(${first.map((s) => `${new URL(s.url).pathname} ${s.bytes}`).join(', ')}); ` +
        `per refresh ${Math.round(perRefresh)} bytes (2 environments, 1 s pings); ` +
        `/api/uptime once a minute, /api/drift every 30 s`,
    );
    expect(first.length).toBeGreaterThanOrEqual(4);
    expect(firstBytes).toBeLessThan(250_000);
    // A refresh carries what came after its cursor and nothing older, however long the history
    // grew: about a second of runs of 2 environments beside the fixed part (checks, thresholds).
    expect(increments.length).toBeGreaterThanOrEqual(3);
    for (const { after, seq, seqs } of increments) {
      expect(seqs.filter((s) => s <= after || s > seq)).toEqual([]);
    }
    // ...and it carries them: each environment's new runs came in some refresh (a page whose
    // refreshes came back empty would pass the line above), and each refresh asked from where the
    // one before left off, so nothing between two refreshes is skipped or fetched twice.
    increments.sort((a, b) => a.after - b.after);
    expect(new Set(increments.flatMap((increment) => increment.fed))).toEqual(
      new Set(['production', 'sandbox']),
    );
    for (let i = 1; i < increments.length; i++) {
      expect(increments[i]!.after, `refresh ${i}`).toBe(increments[i - 1]!.seq);
    }
    expect(perRefresh).toBeLessThan(PER_REFRESH_BUDGET_BYTES);
  });
});
