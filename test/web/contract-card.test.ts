/// <reference lib="dom" />
/**
 * The status page's contract card in a real browser (Debian's chromium through playwright-core):
 * a sandbox whose provider list gains a type and whose pings gain a field, against baselines a
 * first daemon learned from the healthy simulator. The card, `/api/drift` and `isa-monitor drift
 * --json` must say the same thing (docs/drift.md, "The drift document"). Screenshots at 1280 and
 * 390 px go to test-results/screenshots/.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { DriftReport } from '../../src/drift/report.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { writeText } from '../e2e/stack.js';
import { launchChromium, type RunningBrowser } from '../support/browser.js';
import { checksOff } from '../support/checks-off.js';
import { eventually, runCli, startDaemonProcess, type DaemonProcess } from '../support/cli.js';
import { settleBaselines } from '../support/drift-baselines.js';

const SHOTS = 'test-results/screenshots';
const KEY = 'contract-card-key-3c4d5e6f7a8b';
const ENV = { ISA_PRODUCTION_API_KEY: KEY, ISA_SANDBOX_API_KEY: KEY };
const ENVIRONMENTS = ['production', 'sandbox'];

let sim: RunningSimulator;
let configPath: string;
let stateFile: string;
let url: string;
let chromium: RunningBrowser;
let page: Page;
const daemons: DaemonProcess[] = [];
const problems: string[] = [];

async function drift(): Promise<DriftReport | null> {
  return (await (await fetch(`${url}/api/drift`)).json()) as DriftReport | null;
}

async function start(): Promise<string> {
  const daemon = startDaemonProcess(['--config', configPath], ENV);
  daemons.push(daemon);
  return daemon.url;
}

/** Learns the healthy answers with a first daemon, settles them, and drifts the sandbox. */
async function learnThenDrift(): Promise<void> {
  url = await start();
  await eventually(
    async () => {
      const report = await drift();
      const seen = ENVIRONMENTS.every((name) =>
        ['ping', 'service_providers'].every((op) => report?.environments[name]?.operations[op]),
      );
      return seen ? true : undefined;
    },
    30_000,
    'both environments learning',
  );
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  daemons[0]!.child.kill('SIGTERM');
  expect((await daemons[0]!.exit).code).toBe(0);
  expect(await settleBaselines(stateFile)).toBeGreaterThanOrEqual(4);
  sim.faults.add({
    environment: 'sandbox',
    endpoint: 'service_providers',
    fault: { kind: 'drift', change: 'new_value', path: 'providers[].type', value: 'reseller' },
  });
  sim.faults.add({
    environment: 'sandbox',
    endpoint: 'ping',
    fault: { kind: 'drift', change: 'add_field', field: 'region' },
  });
  url = await start();
}

beforeAll(async () => {
  await promisify(execFile)(process.execPath, ['web/build.mjs']);
  await mkdir(SHOTS, { recursive: true });
  const dir = await mkdtemp(join(tmpdir(), 'isa-contract-card-'));
  stateFile = join(dir, 'sessions.json');
  sim = await startSimulator({ apiKeys: [KEY], port: 0 });
  configPath = await writeText(
    join(dir, 'isa-monitor.yaml'),
    stringify({
      listen: { host: '127.0.0.1', port: 0 },
      state_file: stateFile,
      shutdown_timeout: '3s',
      environments: ENVIRONMENTS.map((name) => ({
        name,
        base_url: `${sim.url}/env/${name}`,
        api_key_env: `ISA_${name.toUpperCase()}_API_KEY`,
        request_budget_per_second: 10,
        ping: { interval: '1s', timeout: '500ms' },
        providers: { interval: '1s', timeout: '900ms' },
        ...checksOff(['ping', 'providers']),
      })),
    }),
  );
  await learnThenDrift();
  chromium = await launchChromium();
  page = await chromium.context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  for (const daemon of daemons) if (daemon.child.exitCode === null) daemon.child.kill('SIGTERM');
  await Promise.all(daemons.map((daemon) => daemon.exit));
  await sim?.close();
});

function card(environment: string): Locator {
  return page.locator(`section[data-environment="${environment}"] [data-testid="contract"]`);
}

/** What a card shows: its counts by severity, and each difference as `operation path`. */
async function shown(environment: string) {
  const c = card(environment);
  const counts = Object.fromEntries(
    await c
      .locator('[data-testid="contract-summary"] [data-severity]')
      .evaluateAll((nodes) =>
        nodes.map((n) => [n.getAttribute('data-severity'), Number(n.getAttribute('data-count'))]),
      ),
  ) as Record<string, number>;
  const rows = await c
    .locator('[data-testid="contract-difference"]')
    .evaluateAll((nodes) =>
      nodes.map((n) => `${n.getAttribute('data-operation')} ${n.getAttribute('data-path')}`),
    );
  const across = await c
    .locator('[data-testid="contract-across"]')
    .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-subject')));
  return { counts, rows: rows.sort(), across: across.sort() };
}

/** The same, from a drift document. */
function expected(report: DriftReport, environment: string) {
  const env = report.environments[environment]!;
  const counts = Object.fromEntries(
    Object.entries(env.bySeverity)
      .filter(([, { count }]) => count > 0)
      .map(([severity, { count }]) => [severity, count]),
  );
  const rows = Object.values(env.operations)
    .flatMap((op) => op.differences)
    .map((d) => `${d.operation} ${d.path}`)
    .sort();
  const across = report.across
    .filter((d) => d.has[environment] !== undefined)
    .map((d) => d.subject)
    .sort();
  return { counts, rows, across };
}

describe('the contract card', () => {
  it('shows what /api/drift and isa-monitor drift --json say, per environment', async () => {
    // The drift and the comparison across environments, in the daemon.
    const report = await eventually(
      async () => {
        const r = await drift();
        const sandbox = r?.environments['sandbox']?.bySeverity;
        const across = r?.across.some((d) => d.subject === 'region');
        return sandbox?.warning.count === 1 && sandbox.info.count === 1 && across ? r : undefined;
      },
      30_000,
      'the sandbox drift in /api/drift',
    );
    // The command's document, from the file the daemon writes, says the same.
    await eventually(
      async () => {
        const run = await runCli(['drift', '--config', configPath, '--json'], { env: ENV });
        const cli = JSON.parse(run.stdout) as DriftReport;
        const same = ENVIRONMENTS.every(
          (name) => JSON.stringify(expected(cli, name)) === JSON.stringify(expected(report, name)),
        );
        return same ? true : undefined;
      },
      30_000,
      'drift --json to agree with /api/drift',
    );
    await page.goto(`${url}/?refresh=1`);
    await card('sandbox').locator('[data-testid="contract-difference"]').first().waitFor();
    await card('production').locator('[data-testid="contract-summary"]').waitFor();
    for (const name of ENVIRONMENTS) {
      expect(await shown(name), name).toEqual(expected(report, name));
    }
    expect(await shown('sandbox')).toMatchObject({
      counts: { warning: 1, info: 1 },
      rows: ['ping region', 'service_providers providers[].type'],
    });
    expect(await shown('production')).toMatchObject({
      counts: {},
      rows: [],
      across: expect.arrayContaining(['region', 'providers[].type']),
    });
    await expect(card('production').locator('.badge.up').textContent()).resolves.toBe('matches');
    const row = card('sandbox').locator('[data-path="providers[].type"]');
    await expect(row.textContent()).resolves.toContain('reseller');
    await card('sandbox').screenshot({ path: `${SHOTS}/status-contract-1280.png` });
    await card('production').screenshot({ path: `${SHOTS}/status-contract-production-1280.png` });
    await page.screenshot({ path: `${SHOTS}/status-contract-page-1280.png`, fullPage: true });
    expect(problems).toEqual([]);
  }, 120_000);

  it("shows a provider only the sandbox lists, as the daemon compares the checks' provider lists", async () => {
    sim.faults.add({
      environment: 'sandbox',
      endpoint: 'service_providers',
      fault: { kind: 'provider_list', change: 'added' },
    });
    const only = await eventually(
      async () => (await drift())?.across.find((d) => d.kind === 'provider_only_in'),
      30_000,
      'a provider listed in the sandbox alone',
    );
    expect(only.has['production']).toBe('absent');
    await page.reload();
    await card('sandbox').locator(`[data-subject="${only.subject}"]`).waitFor();
    const report = await drift();
    expect(await shown('sandbox')).toEqual(expected(report!, 'sandbox'));
  }, 60_000);

  it('fits 390 px without horizontal scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await card('sandbox').locator('[data-testid="contract-difference"]').first().waitFor();
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await card('sandbox').screenshot({ path: `${SHOTS}/status-contract-390.png` });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('never lets the API key out of the daemons', () => {
    for (const daemon of daemons) expect(daemon.output()).not.toContain(KEY);
  });
});
