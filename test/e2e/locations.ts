/**
 * Two locations watching one simulator, for the end-to-end tests that compare them: the
 * compressed clock, the thresholds, a daemon per location reaching the simulator over its own
 * network path (`/via/east/`, `/via/west/`), and the scenarios with their measurements. How the
 * locations' series reach the Prometheus that evaluates the rules differs per test: scraped
 * directly (locations.test.ts) or remote-written by an agent per location (remote-write.test.ts,
 * docs/deploy.md, "Many locations").
 */
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { nextFireAt } from '../../src/scheduler/follow-up.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { eventually, startDaemonProcess, type DaemonProcess } from '../support/cli.js';
import {
  notificationsMatching,
  writeText,
  type MonitoringStack,
  type Notification,
} from './stack.js';
import { join } from 'node:path';
import { checksOff } from '../support/checks-off.js';

/**
 * Real seconds per test second: one real minute passes in 6 s. Confirmation pings every 10 s are
 * the tightest interval to scale, and the daemon takes none under 1 s.
 */
export const FACTOR = 10;
export const REAL_MINUTE_MS = 60_000 / FACTOR;
export const scaledMs = (realMs: number): number => Math.max(1, Math.round(realMs / FACTOR));
export const scaled = (realMs: number): string => `${scaledMs(realMs)}ms`;

/**
 * Latency classes. Injected latency does not shrink with the clock, so the thresholds are low
 * enough that a slow ping still fits well inside a (compressed) confirmation interval and ping
 * timeout: 300 ms of a 1 s interval, where a 1.1 s ping takes 1.1 s of 10 s in real time. The
 * critical threshold is a bucket boundary (0.25), so the rules judge it exactly; healthy pings on
 * loopback stay far below it even on a busy machine.
 */
export const THRESHOLDS = { expected: '50ms', warning: '100ms', critical: '250ms' };
export const CRITICAL_BUCKET = '0.25';
export const SLOW_PING_MS = 300;
/**
 * What does not shrink with the clock: each slow ping still takes SLOW_PING_MS before it is
 * recorded, plus process scheduling and HTTP hops. Bounds get this much on top of their scaled
 * value.
 */
export const SLACK_MS = SLOW_PING_MS + 1_000;
/** The bound for a hard degradation seen by every location, in real minutes. */
export const PAGE_BOUND_MINUTES = 4;
/**
 * How long to watch for a page after a fault ends: a location's condition with confirmation pings
 * needs a bad ping within its last minute, the alert on it has no `for:`, and Alertmanager waits
 * its group_wait (30 s); six minutes leave ample room for scrape and evaluation delays.
 */
export const PAGE_AFTERMATH_MS = 6 * REAL_MINUTE_MS;
/** deploy/prometheus/prometheus.yml's evaluation interval. */
export const EVALUATION_INTERVAL_MS = 15_000;
/**
 * How long after a location's last good ping its sustained shape can hold at the latest: the
 * shape's window, B + 1m10s (docs/alerts.md), and one evaluation. The window counts from the
 * evaluation that first saw the good ping, so the scrape delay is already inside it.
 */
export const SUSTAINED_AFTER_LAST_GOOD_MS = 4 * 60_000 + 10_000 + EVALUATION_INTERVAL_MS;

export const API_KEY = 'e2e-locations-key-7c6d5e4f';
export const LOCATIONS = ['east', 'west'] as const;
export type Location = (typeof LOCATIONS)[number];

export function realMinutes(ms: number): string {
  return ((ms * FACTOR) / 60_000).toFixed(1);
}

export const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One scenario's world: a simulator, a daemon per location, Prometheus and Alertmanager. */
export interface Deployment {
  sim: RunningSimulator;
  daemons: Map<Location, DaemonProcess>;
  stack: MonitoringStack;
}

/**
 * One daemon at one location: production only, reached over the location's network path. With
 * `locationKey` it names its location itself (the config key `location`); without it, the
 * location comes from whoever collects its series (a target label or an agent's external label).
 */
export async function startLocation(
  dir: string,
  sim: RunningSimulator,
  location: Location,
  locationKey: boolean,
): Promise<DaemonProcess> {
  const configPath = await writeText(
    join(dir, `${location}.yaml`),
    stringify({
      listen: { host: '127.0.0.1', port: 0 },
      state_file: join(dir, `${location}-sessions.json`),
      shutdown_timeout: '3s',
      ...(locationKey ? { location } : {}),
      environments: [
        {
          name: 'production',
          base_url: `${sim.url}/via/${location}/env/production`,
          api_key_env: 'ISA_PRODUCTION_API_KEY',
          request_budget_per_second: 10,
          thresholds: THRESHOLDS,
          ping: {
            interval: scaled(60_000),
            // A confirmation tick is skipped when the next scheduled ping starts within the
            // ping's deadline, max(timeout, request_timeout + 1 s). The 1 s does not scale, so
            // request_timeout is set low enough for that deadline (1.6 s of a 6 s interval) to
            // skip about as many ticks as the real 11 s of 60 s.
            timeout: scaled(10_000),
            request_timeout: '600ms',
            confirm: {
              enabled: true,
              interval: scaled(10_000),
              window: scaled(3 * 60_000),
              successes: 3,
            },
          },
          ...checksOff(['ping']),
        },
      ],
    }),
  );
  return startDaemonProcess(['--config', configPath], { ISA_PRODUCTION_API_KEY: API_KEY });
}

/**
 * Start-ups take their turn: six daemons, three Prometheus and three Alertmanagers starting at once
 * would starve every other test on two cores of CPU for seconds (the other end-to-end test's
 * pings among them). Warming up, and the scenarios, run at the same time.
 */
let startups: Promise<unknown> = Promise.resolve();
export function oneStartAtATime<T>(start: () => Promise<T>): Promise<T> {
  const turn = startups.then(start);
  startups = turn.catch(() => undefined);
  return turn;
}

/**
 * Waits until Prometheus has both locations of a started deployment over the longest window the
 * paging conditions read (B + 2m10s = 5m10s, docs/alerts.md), and a scrape more: a fault then
 * starts in a steady state.
 */
const WARM_UP_MS = 5 * 60_000 + 30_000;
export async function warmUp(name: string, deployment: Deployment): Promise<Deployment> {
  // 15 s scrapes: all but one of them (the window's edges). Both locations vote, so the quorum
  // is two.
  await eventually(
    async () => {
      const rows = await deployment.stack.query(
        `count_over_time(up{job="isa-monitor"}[${scaled(WARM_UP_MS)}]) >= ${WARM_UP_MS / 15_000 - 1} and up{job="isa-monitor"} == 1`,
      );
      const [reporting] = await deployment.stack.query(
        'environment:isa_locations_reporting:count{environment="production"}',
      );
      return rows.length === LOCATIONS.length && reporting?.value[1] === String(LOCATIONS.length)
        ? true
        : undefined;
    },
    scaledMs(WARM_UP_MS) + 60_000,
    `${name}: a full window of scrapes of both locations`,
  );
  return deployment;
}

/** The ping's start offset inside its interval, from the daemon's "schedules started" line. */
export function pingOffsetMs(daemon: DaemonProcess): number {
  for (const line of daemon.output().split('\n')) {
    if (!line.includes('"schedules started"')) continue;
    const { schedule } = JSON.parse(line) as {
      schedule: Array<{ environment: string; check: string; offsetMs: number }>;
    };
    const ping = schedule.find((t) => t.environment === 'production' && t.check === 'ping');
    if (ping) return ping.offsetMs;
  }
  throw new Error('the daemon has not logged its ping schedule');
}

/** The daemons' whole output so far never contains the API key. */
export function expectKeyKept(d: Deployment): void {
  for (const daemon of d.daemons.values()) expect(daemon.output()).not.toContain(API_KEY);
}

export async function stopDeployment(d: Deployment): Promise<void> {
  await Promise.all(
    [...d.daemons.values()].map(async (daemon) => {
      daemon.child.kill('SIGTERM');
      await daemon.exit;
    }),
  );
  await d.stack?.stop();
  await d.sim.close();
}

/**
 * Makes production's pings slow over the given locations' paths, or with no paths given in the
 * API itself (whichever way a location comes in); returns the rule ids.
 */
export function slowPings(sim: RunningSimulator, paths?: readonly Location[]): string[] {
  const rule = { environment: 'production', endpoint: 'ping' as const };
  const fault = { kind: 'latency' as const, ms: SLOW_PING_MS };
  if (!paths) return [sim.faults.add({ ...rule, fault })];
  return paths.map((via) => sim.faults.add({ ...rule, via, fault }));
}

/** Pings of both families (scheduled and confirmation) slower than critical, per location. */
export async function slowPingsOver(
  stack: MonitoringStack,
  windowMs: number,
): Promise<Record<string, number>> {
  const window = scaled(windowMs);
  const slow = (family: string) =>
    `sum by (location) (increase(${family}_count{environment="production"}[${window}]))
     - sum by (location) (increase(${family}_bucket{environment="production",le="${CRITICAL_BUCKET}"}[${window}]))`;
  const rows = await stack.query(
    `${slow('isa_ping_duration_seconds')} + ${slow('isa_ping_confirm_duration_seconds')}`,
  );
  return Object.fromEntries(rows.map((r) => [r.metric['location'] ?? '', Number(r.value[1])]));
}

/**
 * How long (real ms, to one evaluation) a location held its per-location latency condition with
 * confirmation pings: the condition that pages with no `for:` once enough locations hold it.
 */
export async function conditionHeldMs(
  stack: MonitoringStack,
  location: Location,
  windowMs: number,
): Promise<number> {
  const [row] = await stack.query(
    `count_over_time(environment:isa_ping_latency_critical:confirmed{environment="production",location="${location}"}[${scaled(windowMs)}])`,
  );
  return Number(row?.value[1] ?? 0) * EVALUATION_INTERVAL_MS;
}

/**
 * When each location's last good ping (of either family, not slower than critical) up to `untilMs`
 * reached the rules: the first evaluation at which the recorded count of good pings had risen, the
 * moment the sustained shape counts its window from. Times are Unix ms; `fromMs` must lie at least
 * a scheduled ping before `untilMs`, so that every location has one.
 */
export async function lastGoodPingAt(
  stack: MonitoringStack,
  fromMs: number,
  untilMs: number,
): Promise<Map<Location, number>> {
  const series = await stack.queryRange(
    'environment:isa_pings_not_slow_critical:total{environment="production"}',
    { startMs: fromMs, endMs: untilMs, stepMs: scaledMs(EVALUATION_INTERVAL_MS) / 2 },
  );
  const found = new Map<Location, number>();
  for (const { metric, values } of series) {
    let previous = Number.POSITIVE_INFINITY;
    for (const [at, value] of values) {
      if (Number(value) > previous) found.set(metric['location'] as Location, at * 1000);
      previous = Number(value);
    }
  }
  for (const location of LOCATIONS) {
    if (!found.has(location)) throw new Error(`${location}: no good ping seen in the range`);
  }
  return found;
}

/**
 * What the per-location paging conditions saw from `fromMs` to `untilMs`, one line per location
 * and expression, as `seconds since fromMs:value` at each evaluation: for a failure message.
 */
export async function conditionTimeline(
  stack: MonitoringStack,
  fromMs: number,
  faultAtMs: number,
  untilMs: number,
): Promise<string> {
  const production = '{environment="production"}';
  const exprs = [
    `environment:isa_pings_not_slow_critical:increase4m10s${production}`,
    `environment:isa_pings_slow_critical:increase4m10s${production}`,
    `environment:isa_ping_latency_critical:confirmed${production}`,
    `environment:isa_monitor_voting:bool${production}`,
    // Scheduled pings alone, and those skipped: confirmation pings start only after a slow one.
    `sum by (location) (isa_ping_attempts_total${production})`,
    `sum by (location) (isa_checks_skipped_total{environment="production",check="ping"})`,
  ];
  const lead = ((faultAtMs - fromMs) / 1000).toFixed(1);
  const lines = [`times: seconds from ${lead} s before the fault started`];
  for (const expr of exprs) {
    const series = await stack.queryRange(expr, {
      startMs: fromMs,
      endMs: untilMs,
      stepMs: scaledMs(EVALUATION_INTERVAL_MS),
    });
    for (const { metric, values } of series) {
      const points = values.map(
        ([at, v]) => `${(at - fromMs / 1000).toFixed(1)}:${Number(v).toFixed(1)}`,
      );
      lines.push(`${metric['location']} ${expr}: ${points.join(' ')}`);
    }
  }
  return lines.join('\n');
}

/** Pages (notifications to the pager) that reported something firing since `since`. */
export function pagesSince(stack: MonitoringStack, since: number): Notification[] {
  return stack.receiver.notifications.filter(
    (n) => n.at >= since && n.receiver === 'pager' && n.alerts.some((a) => a.status === 'firing'),
  );
}

/**
 * Sustained slowness on one location's path (east), for longer than a fault seen by both may take
 * to page: east's own condition holds, west's never does, and nothing pages. Returns the line for
 * the report.
 */
export async function expectNoPageFromOneLocation(deployment: Deployment): Promise<string> {
  const { sim, stack } = deployment;
  const start = performance.now();
  slowPings(sim, ['east']);
  // Longer than a fault seen by both locations may take to page.
  await wait((PAGE_BOUND_MINUTES + 2) * REAL_MINUTE_MS + SLACK_MS);
  const watchedMs = (performance.now() - start) * FACTOR;
  const slow = await slowPingsOver(stack, watchedMs);
  const eastHeldMs = await conditionHeldMs(stack, 'east', watchedMs);
  const westHeldMs = await conditionHeldMs(stack, 'west', watchedMs);
  sim.faults.clear();
  // East alone would have paged: its condition, which pages with no `for:`, held a while.
  expect(eastHeldMs).toBeGreaterThanOrEqual(60_000);
  expect(westHeldMs).toBe(0);
  // West never had the fault; a stray slow ping on a busy machine is not it.
  expect(slow['west'] ?? 0).toBeLessThan(2);
  expect(pagesSince(stack, start)).toEqual([]);
  expectKeyKept(deployment);
  return (
    `  slowness at one location only (${slow['east']?.toFixed(0)} slow pings there, its ` +
    `condition held ${(eastHeldMs / 60_000).toFixed(1)} min): no page ` +
    `(watched ${realMinutes(performance.now() - start)} min)`
  );
}

/**
 * Slowness in the API itself, seen from both locations: one page for the environment, within the
 * bound. Returns the lines for the report and the times from the fault's start (real ms of the
 * test's clock) until the page reached Alertmanager and was notified.
 */
export async function expectOnePageFromBoth(
  deployment: Deployment,
  /** How much later than a scrape a sample can reach the rules' Prometheus (remote write). */
  deliveryMs = 0,
): Promise<{ lines: string[]; reachedAfterMs: number; notifiedAfterMs: number }> {
  const { sim, stack } = deployment;
  const onset = performance.now();
  const startedAt = Date.now();
  slowPings(sim);
  // The first scheduled ping that sees the fault, per location: the page needs both, and
  // before its first slow ping a location cannot know (docs/alerts.md counts from there).
  const bothSawItAfter = Math.max(
    ...[...deployment.daemons.values()].map(
      (daemon) => nextFireAt(startedAt, scaledMs(60_000), pingOffsetMs(daemon)) - startedAt,
    ),
  );
  const isThePage = (labels: Record<string, string>): boolean =>
    labels['alertname'] === 'IsaApiLatencyHigh' &&
    labels['environment'] === 'production' &&
    labels['severity'] === 'critical';
  // The page reaches Alertmanager when Prometheus sends the firing alert...
  await eventually(
    async () => ((await stack.alerts()).some((a) => isThePage(a.labels)) ? true : undefined),
    3 * PAGE_BOUND_MINUTES * REAL_MINUTE_MS + SLACK_MS,
    'IsaApiLatencyHigh critical in Alertmanager',
  );
  const reachedAfter = performance.now() - onset;
  const reachedAt = startedAt + reachedAfter;
  // ...and the pager after Alertmanager's group_wait.
  const page = await eventually(
    () =>
      notificationsMatching(stack.receiver, {
        alertname: 'IsaApiLatencyHigh',
        environment: 'production',
        severity: 'critical',
        status: 'firing',
        since: onset,
      })[0],
    2 * REAL_MINUTE_MS + SLACK_MS,
    'the page to be notified',
  );
  const notifiedAfter = page.at - onset;
  sim.faults.clear();
  // The later location's last good ping: the previous scheduled ping, or a confirmation ping
  // of a sequence a busy machine started by a stray slow ping before the fault.
  // From a scheduled ping and a half before the fault, so every location has a good one.
  const lookedFrom = startedAt - scaledMs(90_000);
  const lastGood = await lastGoodPingAt(stack, lookedFrom, reachedAt);
  const lastGoodAt = Math.max(...lastGood.values());
  const lastGoodWhen =
    `${realMinutes(Math.abs(startedAt - lastGoodAt))} min ` +
    `${lastGoodAt <= startedAt ? 'before' : 'after'} the start`;
  const lines = [
    `  slowness at both locations, from the fault's start: reached Alertmanager after ` +
      `${realMinutes(reachedAfter)} min, notified after ${realMinutes(notifiedAfter)} min`,
    `  ... from the first slow scheduled ping at the later location (` +
      `${realMinutes(bothSawItAfter)} min after the start): reached Alertmanager after ` +
      `${realMinutes(reachedAfter - bothSawItAfter)} min (the issue's ${PAGE_BOUND_MINUTES} ` +
      `min where the previous scheduled ping was the last good one)`,
    `  ... from the later location's last good ping (${lastGoodWhen}): reached ` +
      `Alertmanager after ${realMinutes(reachedAt - lastGoodAt)} min (bound ` +
      `${realMinutes(scaledMs(SUSTAINED_AFTER_LAST_GOOD_MS))} min, and ` +
      `${realMinutes(SLACK_MS)} min slack for what does not scale)`,
  ];
  expect(page.receiver).toBe('pager');
  // One page for the environment, not one per location.
  expect(page.groupLabels).toEqual({ alertname: 'IsaApiLatencyHigh', environment: 'production' });
  expect(pagesSince(stack, onset)).toHaveLength(1);
  // No good ping while the fault lasts. The last one may have left just before the fault: it
  // is good for at most the critical threshold (250 ms, which does not scale), then waits up
  // to a scrape (and its delivery) and an evaluation for the rules, and the range query sees it
  // up to a step (half an evaluation) later.
  const timeline = await conditionTimeline(stack, lookedFrom, startedAt, reachedAt);
  expect(lastGoodAt - startedAt, timeline).toBeLessThanOrEqual(
    Number(CRITICAL_BUCKET) * 1000 +
      scaledMs(15_000 + EVALUATION_INTERVAL_MS * 1.5) +
      deliveryMs +
      SLACK_MS,
  );
  // The sustained shape pages B + 1m10s after the later location's last good ping. When that
  // was its previous scheduled ping (a quiet machine), this is 3 min 10 s after its first slow
  // one, and the 4-minute bound from there holds; a stray slow ping during the warm-up
  // can start confirmation pings whose good ones end later, and the page follows them.
  expect(reachedAt - lastGoodAt, timeline).toBeLessThanOrEqual(
    scaledMs(SUSTAINED_AFTER_LAST_GOOD_MS) + SLACK_MS,
  );
  // From the fault's start, a location may wait up to one ping interval for its first ping.
  expect(reachedAfter, timeline).toBeLessThanOrEqual(
    (PAGE_BOUND_MINUTES + 1) * REAL_MINUTE_MS + SLACK_MS,
  );
  expectKeyKept(deployment);
  return { lines, reachedAfterMs: reachedAfter, notifiedAfterMs: notifiedAfter };
}
