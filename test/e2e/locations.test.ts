/**
 * End to end with two locations: two daemons (separate processes, separate ledgers) watch the
 * production environment of one simulator, each over its own network path (`/via/east/`,
 * `/via/west/`), and one Prometheus scrapes both, its `location` given as a target label of the
 * scrape config. A latency fault on one path is what a network problem near one location looks
 * like; a fault without a path is the API itself getting slow.
 *
 * Everything runs on a compressed clock (FACTOR real seconds per test second): the daemons'
 * intervals, the rules' windows, `for:` and `keep_firing_for` (scripts/rules/scale-rules.ts) and
 * Alertmanager's timers. The scenarios share one production environment, so they run one after
 * the other, each starting from windows that hold no slow ping.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { eventually, startDaemonProcess, type DaemonProcess } from '../support/cli.js';
import {
  notificationsMatching,
  startMonitoringStack,
  writeText,
  type MonitoringStack,
  type Notification,
} from './stack.js';

/** Real seconds per test second: one real minute passes in 2 s. */
const FACTOR = 30;
const REAL_MINUTE_MS = 60_000 / FACTOR;
const scaledMs = (realMs: number): number => Math.max(1, Math.round(realMs / FACTOR));
const scaled = (realMs: number): string => `${scaledMs(realMs)}ms`;

/**
 * Latency classes. Injected latency does not shrink with the clock, so the thresholds are low
 * enough that a slow ping still fits well inside a (compressed) confirmation interval: 200 ms of a
 * 333 ms interval, where a 1.1 s ping takes 1.1 s of 10 s in real time. The critical threshold is
 * a bucket boundary (0.1), so the rules judge it exactly.
 */
const THRESHOLDS = { expected: '25ms', warning: '50ms', critical: '100ms' };
const SLOW_PING_MS = 200;
/**
 * What does not shrink with the clock: each slow ping still takes SLOW_PING_MS before it is
 * recorded, plus process scheduling and HTTP hops. Bounds get this much on top of their scaled
 * value.
 */
const SLACK_MS = SLOW_PING_MS + 1_000;
/** The bound for a hard degradation seen by every location, in real minutes. */
const PAGE_BOUND_MINUTES = 4;
/** The longest window the latency and down rules look back over, in real ms. */
const LATENCY_WINDOW_MS = 10 * 60_000;

const API_KEY = 'e2e-locations-key-7c6d5e4f';
const LOCATIONS = ['east', 'west'] as const;
type Location = (typeof LOCATIONS)[number];

let dir: string;
let sim: RunningSimulator;
let stack: MonitoringStack;
const daemons = new Map<Location, DaemonProcess>();
const report: string[] = [];

function realMinutes(ms: number): string {
  return ((ms * FACTOR) / 60_000).toFixed(1);
}

/** One daemon at one location: production only, reached over the location's network path. */
async function startLocation(location: Location): Promise<DaemonProcess> {
  const configPath = await writeText(
    join(dir, `${location}.yaml`),
    stringify({
      listen: { host: '127.0.0.1', port: 0 },
      state_file: join(dir, `${location}-sessions.json`),
      shutdown_timeout: '3s',
      environments: [
        {
          name: 'production',
          base_url: `${sim.url}/via/${location}/env/production`,
          api_key_env: 'ISA_PRODUCTION_API_KEY',
          request_budget_per_second: 10,
          thresholds: THRESHOLDS,
          ping: { interval: scaled(60_000), timeout: '1500ms' },
          lifecycle: { enabled: false },
          providers: { enabled: false },
          coverage: { enabled: false },
        },
      ],
    }),
  );
  return startDaemonProcess(['--config', configPath], { ISA_PRODUCTION_API_KEY: API_KEY });
}

/** Makes production's pings slow over the given locations' paths; returns the rule ids. */
function slowPings(locations: readonly Location[]): string[] {
  return locations.map((via) =>
    sim.faults.add({
      environment: 'production',
      via,
      endpoint: 'ping',
      fault: { kind: 'latency', ms: SLOW_PING_MS },
    }),
  );
}

/** Slow pings per location over the last latency window, as Prometheus has them. */
async function slowPingsInWindow(): Promise<Record<string, number>> {
  const window = scaled(LATENCY_WINDOW_MS);
  const rows = await stack.query(
    `sum by (location) (
       increase(isa_ping_duration_seconds_count{environment="production"}[${window}])
       - ignoring (le)
       increase(isa_ping_duration_seconds_bucket{environment="production",le="0.1"}[${window}])
     )`,
  );
  return Object.fromEntries(rows.map((r) => [r.metric['location'] ?? '', Number(r.value[1])]));
}

/** Waits until no location has a slow ping left in the window and no latency alert is pending. */
async function untilWindowsAreClean(): Promise<void> {
  await eventually(
    async () => {
      const slow = Object.values(await slowPingsInWindow());
      const alerts = await stack.query('ALERTS{alertname="IsaApiLatencyHigh"}');
      return slow.every((n) => n < 0.5) && alerts.length === 0 ? true : undefined;
    },
    LATENCY_WINDOW_MS / FACTOR + 30_000,
    'every latency window to hold no slow ping',
  );
}

/** Pages (notifications to the pager) that reported something firing since `since`. */
function pagesSince(since: number): Notification[] {
  return stack.receiver.notifications.filter(
    (n) => n.at >= since && n.receiver === 'pager' && n.alerts.some((a) => a.status === 'firing'),
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'isa-e2e-locations-'));
  sim = await startSimulator({ apiKeys: [API_KEY], qualifyDelayMs: 300 });
  for (const location of LOCATIONS) daemons.set(location, await startLocation(location));
  const targets = await Promise.all(
    LOCATIONS.map(async (location) => ({
      host: new URL(await daemons.get(location)!.url).host,
      // The location as a target label of the scrape config (contract §6 allows either way).
      labels: { location },
    })),
  );
  stack = await startMonitoringStack({ dir, factor: FACTOR, targets });
  // Both locations scraped, with a full window of pings each (the minimum-samples guards).
  await eventually(
    async () => {
      const rows = await stack.query(
        `sum by (location) (increase(isa_ping_attempts_total{environment="production"}[${scaled(LATENCY_WINDOW_MS)}]))`,
      );
      return rows.length === LOCATIONS.length && rows.every((r) => Number(r.value[1]) >= 8)
        ? true
        : undefined;
    },
    LATENCY_WINDOW_MS / FACTOR + 30_000,
    'eight pings in the window at both locations',
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(
    [...daemons.values()].map(async (d) => {
      d.child.kill('SIGTERM');
      await d.exit;
    }),
  );
  await stack?.stop();
  await sim?.close();
  if (report.length > 0)
    console.log(`\nend-to-end, two locations (clock compressed ${FACTOR}x):\n${report.join('\n')}`);
});

describe('two locations, end to end with real Prometheus and Alertmanager', () => {
  it('does not page on a 2-minute burst seen by both locations', async () => {
    const start = performance.now();
    const rules = slowPings(LOCATIONS);
    await new Promise((r) => setTimeout(r, 2 * REAL_MINUTE_MS));
    for (const id of rules) sim.faults.remove(id);
    // Both locations saw it.
    const slow = await slowPingsInWindow();
    expect(slow['east']).toBeGreaterThanOrEqual(1);
    expect(slow['west']).toBeGreaterThanOrEqual(1);
    // Long enough for a page to show up: the window, `for:` and Alertmanager's group_wait.
    await new Promise((r) => setTimeout(r, 10 * REAL_MINUTE_MS + SLACK_MS));
    expect(pagesSince(start)).toEqual([]);
    report.push(
      `  2-minute burst at both locations: no page (watched ${realMinutes(performance.now() - start)} min)`,
    );
    await untilWindowsAreClean();
  }, 120_000);

  it('does not page on sustained slowness seen from one location only', async () => {
    const start = performance.now();
    const rules = slowPings(['east']);
    // Twice the time a fault seen by both locations may take to page.
    await new Promise((r) => setTimeout(r, 2 * PAGE_BOUND_MINUTES * REAL_MINUTE_MS + SLACK_MS));
    const slow = await slowPingsInWindow();
    for (const id of rules) sim.faults.remove(id);
    expect(slow['east']).toBeGreaterThanOrEqual(5);
    expect(slow['west'] ?? 0).toBeLessThan(0.5);
    expect(pagesSince(start)).toEqual([]);
    report.push(
      `  slowness at one location only (${slow['east']?.toFixed(0)} slow pings in its window): ` +
        `no page (watched ${realMinutes(performance.now() - start)} min)`,
    );
    await untilWindowsAreClean();
  }, 120_000);

  it('pages once for the environment when both locations see it, within the bound', async () => {
    const onset = performance.now();
    sim.faults.add({
      environment: 'production',
      endpoint: 'ping',
      fault: { kind: 'latency', ms: SLOW_PING_MS },
    });
    const page = await eventually(
      () =>
        notificationsMatching(stack.receiver, {
          alertname: 'IsaApiLatencyHigh',
          environment: 'production',
          severity: 'critical',
          status: 'firing',
          since: onset,
        })[0],
      3 * PAGE_BOUND_MINUTES * REAL_MINUTE_MS + SLACK_MS,
      'IsaApiLatencyHigh critical',
    );
    const pagedAfter = page.at - onset;
    sim.faults.clear();
    report.push(
      `  slowness at both locations: paged after ${realMinutes(pagedAfter)} min ` +
        `(bound ${PAGE_BOUND_MINUTES} min; ${realMinutes(SLACK_MS)} min slack for what does not scale)`,
    );
    expect(page.receiver).toBe('pager');
    // One page for the environment, not one per location.
    expect(page.groupLabels).toEqual({ alertname: 'IsaApiLatencyHigh', environment: 'production' });
    expect(pagesSince(onset)).toHaveLength(1);
    expect(pagedAfter).toBeLessThanOrEqual(PAGE_BOUND_MINUTES * REAL_MINUTE_MS + SLACK_MS);
  }, 120_000);

  it('never let the API key out of either daemon', () => {
    for (const daemon of daemons.values()) expect(daemon.output()).not.toContain(API_KEY);
  });
});
