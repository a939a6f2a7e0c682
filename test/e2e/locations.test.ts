/**
 * End to end with two locations: two daemons (separate processes, separate ledgers) with
 * confirmation pings watch the production environment of one simulator, each over its own network
 * path (`/via/east/`, `/via/west/`), and one Prometheus scrapes both. A latency fault on one path
 * is what a network problem near one location looks like; a fault without a path is the API
 * itself getting slow.
 *
 * Everything runs on a compressed clock (FACTOR real seconds per test second): the daemons'
 * intervals, the rules' windows, `for:` and `keep_firing_for` (scripts/rules/scale-rules.ts) and
 * Alertmanager's timers. Each scenario gets a deployment of its own (simulator, two daemons,
 * Prometheus, Alertmanager), so the scenarios run at the same time without seeing each other's
 * faults, windows or alert groups. The locations, scenarios and measurements are shared with
 * remote-write.test.ts (./locations.ts).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import type { DaemonProcess } from '../support/cli.js';
import {
  API_KEY,
  FACTOR,
  LOCATIONS,
  PAGE_AFTERMATH_MS,
  REAL_MINUTE_MS,
  SLACK_MS,
  expectKeyKept,
  expectNoPageFromOneLocation,
  expectOnePageFromBoth,
  oneStartAtATime,
  pagesSince,
  realMinutes,
  slowPings,
  slowPingsOver,
  startLocation,
  stopDeployment,
  wait,
  warmUp,
  type Deployment,
  type Location,
} from './locations.js';
import { startMonitoringStack, type MonitoringStack } from './stack.js';

const report: string[] = [];
const running: Deployment[] = [];

/**
 * Starts a deployment's processes, until Prometheus and Alertmanager answer. East gets its
 * location from the scrape config's target label, west from its own `location` key: the two ways
 * the contract allows.
 */
async function launch(name: string): Promise<Deployment> {
  const dir = await mkdtemp(join(tmpdir(), `isa-e2e-${name}-`));
  const sim = await startSimulator({ apiKeys: [API_KEY], qualifyDelayMs: 300 });
  const daemons = new Map<Location, DaemonProcess>();
  const deployment = { sim, daemons, stack: undefined as unknown as MonitoringStack };
  running.push(deployment);
  for (const location of LOCATIONS)
    daemons.set(location, await startLocation(dir, sim, location, location === 'west'));
  const targets = await Promise.all(
    LOCATIONS.map(async (location) => ({
      host: new URL(await daemons.get(location)!.url).host,
      ...(location === 'east' ? { labels: { location } } : {}),
    })),
  );
  deployment.stack = await startMonitoringStack({ dir, factor: FACTOR, targets });
  return deployment;
}

/** Starts a deployment and waits for its warm-up (a full window of scrapes of both locations). */
async function startDeployment(name: string): Promise<Deployment> {
  return warmUp(name, await oneStartAtATime(() => launch(name)));
}

afterAll(async () => {
  await Promise.all(running.map(stopDeployment));
  if (report.length > 0)
    console.log(`\nend-to-end, two locations (clock compressed ${FACTOR}x):\n${report.join('\n')}`);
}, 60_000);

describe.concurrent('two locations, end to end with real Prometheus and Alertmanager', () => {
  it('does not page on a 2-minute burst seen by both locations', async () => {
    const deployment = await startDeployment('burst');
    const { sim, stack } = deployment;
    const start = performance.now();
    const rules = slowPings(sim, LOCATIONS);
    await wait(2 * REAL_MINUTE_MS);
    for (const id of rules) sim.faults.remove(id);
    // Both locations saw it.
    const slow = await slowPingsOver(stack, 3 * 60_000);
    expect(slow['east']).toBeGreaterThanOrEqual(1);
    expect(slow['west']).toBeGreaterThanOrEqual(1);
    await wait(PAGE_AFTERMATH_MS + SLACK_MS);
    expect(pagesSince(stack, start)).toEqual([]);
    expectKeyKept(deployment);
    report.push(
      `  2-minute burst at both locations: no page (watched ${realMinutes(performance.now() - start)} min)`,
    );
  }, 180_000);

  it('does not page on sustained slowness seen from one location only', async () => {
    report.push(await expectNoPageFromOneLocation(await startDeployment('one-location')));
  }, 180_000);

  it('pages once for the environment when both locations see it, within the bound', async () => {
    report.push(...(await expectOnePageFromBoth(await startDeployment('both'))).lines);
  }, 180_000);
});
