/**
 * End to end with two locations over remote write (docs/deploy.md, "Many locations"): at each
 * location a daemon and a Prometheus in agent mode (the shipped deploy/agent/prometheus.yml) that
 * scrapes it and remote-writes with its location as an external label; at the centre a
 * Prometheus with the remote-write receiver (deploy/central/prometheus.yml) that evaluates the
 * shipped rules, then Alertmanager and a webhook. The daemons reach one simulator over two
 * network paths as in locations.test.ts, whose scenarios and bounds this test shares
 * (./locations.ts), so a page over remote write is held to the bound of direct scraping.
 *
 * East's daemon has no `location` key: its location comes from its agent alone. West's daemon
 * names itself `west` and its agent says `west` too: the label is on the series before the
 * agent's external label would add it, so it stays as it is.
 *
 * One deployment has both agents give their monitor the same `instance`, as agents that each
 * scrape the same Service in their own cluster do: only `location` tells the monitors apart, and
 * every rule must still evaluate and page (docs/deploy.md, "Locations may share an instance").
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { eventually, type DaemonProcess } from '../support/cli.js';
import {
  API_KEY,
  EVALUATION_INTERVAL_MS,
  FACTOR,
  LOCATIONS,
  expectNoPageFromOneLocation,
  expectOnePageFromBoth,
  oneStartAtATime,
  pagesSince,
  REAL_MINUTE_MS,
  SLACK_MS,
  wait,
  scaledMs,
  startLocation,
  stopDeployment,
  warmUp,
  type Deployment,
  type Location,
} from './locations.js';
import {
  ruleCount,
  startMonitoringStack,
  startPrometheusAgent,
  unhealthyRules,
  type MonitoringStack,
  type PrometheusAgent,
} from './stack.js';

/** deploy/agent/prometheus.yml's batch_send_deadline: how late a sample may leave an agent. */
const SEND_DEADLINE_MS = 5_000;
/**
 * The rules' freshness bound on a location's vote (docs/alerts.md, "Locations: who votes"): it
 * votes while its newest `up` at the centre is at most this old, in real time.
 */
const VOTE_FRESHNESS_MS = 60_000;

interface RemoteWriteDeployment extends Deployment {
  agents: Map<Location, PrometheusAgent>;
}

const report: string[] = [];
const running: RemoteWriteDeployment[] = [];

/**
 * The `instance` both agents give their monitor when the locations share one, as agents that each
 * scrape the same Service in their own cluster do (docs/deploy.md, "Many locations").
 */
const SHARED_INSTANCE = 'isa-monitor:9464';

/**
 * The central store with the rules, then per location a daemon and its agent. With `instance`,
 * each agent's scrape target sets that `instance` label, so only `location` tells them apart.
 */
async function launch(name: string, instance?: string): Promise<RemoteWriteDeployment> {
  const dir = await mkdtemp(join(tmpdir(), `isa-e2e-rw-${name}-`));
  const sim = await startSimulator({ apiKeys: [API_KEY], qualifyDelayMs: 300 });
  const daemons = new Map<Location, DaemonProcess>();
  const agents = new Map<Location, PrometheusAgent>();
  const deployment: RemoteWriteDeployment = {
    sim,
    daemons,
    agents,
    stack: undefined as unknown as MonitoringStack,
  };
  running.push(deployment);
  deployment.stack = await startMonitoringStack({
    dir,
    factor: FACTOR,
    targets: [],
    remoteWrite: true,
  });
  for (const location of LOCATIONS) {
    const daemon = await startLocation(dir, sim, location, location === 'west');
    daemons.set(location, daemon);
    agents.set(
      location,
      await startPrometheusAgent({
        dir,
        factor: FACTOR,
        location,
        target: {
          host: new URL(await daemon.url).host,
          ...(instance !== undefined && { labels: { instance } }),
        },
        remoteWriteUrl: deployment.stack.remoteWriteUrl,
      }),
    );
  }
  return deployment;
}

async function startDeployment(name: string, instance?: string): Promise<RemoteWriteDeployment> {
  const deployment = await oneStartAtATime(() => launch(name, instance));
  await warmUp(name, deployment);
  return deployment as RemoteWriteDeployment;
}

/**
 * Every rule of the central Prometheus evaluated without error, and the series arrived labelled
 * once: `location` from the agent on every series of east (`up` included), west's own label kept,
 * nothing renamed to `exported_location`.
 */
async function expectRulesHealthy(deployment: RemoteWriteDeployment): Promise<void> {
  const { stack } = deployment;
  expect(await unhealthyRules(stack.prometheusUrl)).toEqual([]);
  const byLocation = async (expr: string): Promise<string[]> =>
    (await stack.query(`count by (location) (${expr})`)).map((r) => r.metric['location'] ?? '');
  expect((await byLocation('up{job="isa-monitor"}')).sort()).toEqual([...LOCATIONS]);
  expect((await byLocation('isa_ping_attempts_total{job="isa-monitor"}')).sort()).toEqual([
    ...LOCATIONS,
  ]);
  expect(await stack.query('{exported_location!=""}')).toEqual([]);
  const [voting] = await stack.query(
    'environment:isa_locations_reporting:count{environment="production"}',
  );
  expect(voting?.value[1]).toBe(String(LOCATIONS.length));
}

/** Test milliseconds as real seconds on the compressed clock. */
const realSeconds = (ms: number): string => ((ms * FACTOR) / 1000).toFixed(0);

async function stopRemoteWriteDeployment(d: RemoteWriteDeployment): Promise<void> {
  await Promise.all([...d.agents.values()].map((a) => a.stop()));
  await stopDeployment(d);
}

/** Samples of `expr`'s series from `fromMs` to `toMs` (Unix ms), per location, at the centre. */
async function samplesBetween(
  deployment: RemoteWriteDeployment,
  expr: string,
  fromMs: number,
  toMs: number,
): Promise<Record<string, number>> {
  const series = await deployment.stack.queryRange(
    `sum by (location) (count_over_time(${expr}[${toMs - fromMs}ms]))`,
    { startMs: toMs, endMs: toMs, stepMs: 1_000 },
  );
  return Object.fromEntries(
    series.map((s) => [s.metric['location'] ?? '', Number(s.values[0]?.[1] ?? 0)]),
  );
}

afterAll(async () => {
  await Promise.all(running.map(stopRemoteWriteDeployment));
  if (report.length > 0)
    console.log(
      `\nend-to-end, two locations over remote write (clock compressed ${FACTOR}x):\n` +
        report.join('\n'),
    );
}, 60_000);

describe.concurrent('two locations over remote write, central rules, end to end', () => {
  it('loses no samples while the centre is down a minute; an agent down two minutes', async () => {
    const deployment = await startDeployment('outages');
    const { stack } = deployment;
    const start = performance.now();
    const scrapeMs = scaledMs(15_000);
    const up = 'up{job="isa-monitor"}';

    // The centre down for a minute: the agents keep their write-ahead logs and send it later.
    const centreDownAt = Date.now();
    await stack.stopPrometheus();
    await wait(REAL_MINUTE_MS);
    await stack.startPrometheus();
    const centreUpAt = Date.now();
    await wait(REAL_MINUTE_MS / 2);
    const duringCentre = await samplesBetween(deployment, up, centreDownAt, centreUpAt);
    const expected = Math.floor((centreUpAt - centreDownAt) / scrapeMs);
    for (const location of LOCATIONS)
      expect(
        duringCentre[location],
        `${location}: ${JSON.stringify(duringCentre)}`,
      ).toBeGreaterThanOrEqual(expected - 1);
    report.push(
      `  centre down 1 min: ${JSON.stringify(duringCentre)} samples of up per location arrived ` +
        `for the outage afterwards (${expected} scrapes in it)`,
    );

    // East's agent down for two minutes: nothing arrives from east, not even staleness.
    const east = deployment.agents.get('east')!;
    const attempts = 'sum(isa_ping_attempts_total{location="east"})';
    const eastVotes = async (): Promise<boolean> =>
      (await stack.query('environment:isa_monitor_voting:bool{location="east"}')).length > 0;
    const [before] = await stack.query(attempts);
    await eventually(eastVotes, 30_000, 'east to vote before its agent stops');
    const agentDownAt = Date.now();
    const stopping = performance.now();
    await east.stop();
    // The agent has exited: east's newest `up` at the centre is at most as old as this, so its
    // vote ends by the first evaluation after the freshness bound has passed since then, while
    // its last samples are still in the 5-minute lookback.
    const stoppedAt = performance.now();
    await eventually(async () => !(await eastVotes()), 2 * REAL_MINUTE_MS, "east's vote to end");
    const voteEndedMs = performance.now() - stoppedAt;
    const [lastUp] = await stack.query('up{job="isa-monitor",location="east"}');
    expect(
      voteEndedMs,
      `east's vote ended ${voteEndedMs.toFixed(0)} ms after its agent had exited`,
    ).toBeLessThanOrEqual(scaledMs(VOTE_FRESHNESS_MS + EVALUATION_INTERVAL_MS) + SLACK_MS);
    await wait(Math.max(0, 2 * REAL_MINUTE_MS - (performance.now() - stoppedAt)));
    expect(await eastVotes(), 'east still without a vote at the end of the outage').toBe(false);
    await east.start();
    const agentUpAt = Date.now();
    const restartedAt = performance.now();
    // Its first fresh samples bring the vote back; the agent replays its write-ahead log first,
    // which takes its own (unscaled) seconds.
    await eventually(eastVotes, 30_000, "east's vote after its agent's restart");
    const voteBackMs = performance.now() - restartedAt;
    // The monitor went on pinging, and its counters tell the centre so once the agent sends
    // again: after the agent has replayed its write-ahead log, which takes its own (unscaled)
    // seconds.
    const after = await eventually(
      async () => {
        const [row] = await stack.query(attempts);
        // Two scheduled pings at least fall in two minutes. The first samples to arrive may be
        // older ones the agent had not sent before it stopped, replayed from its log.
        return Number(row?.value[1]) - Number(before?.value[1]) >= 2 ? row : undefined;
      },
      30_000,
      "east's pings at the centre after its agent's restart",
    );
    const caughtUpMs = Date.now() - agentUpAt;
    const duringAgent = await samplesBetween(deployment, up, agentDownAt, agentUpAt);
    const pinged = Number(after?.value[1]) - Number(before?.value[1]);
    // When the vote ended, east's last `up` was still within the lookback (5 minutes).
    expect(lastUp?.value[1]).toBe('1');
    expect(pagesSince(stack, start)).toEqual([]);
    expect(await unhealthyRules(stack.prometheusUrl)).toEqual([]);
    report.push(
      `  east's agent down 2 min: ${duringAgent['east'] ?? 0} samples of its up for the outage ` +
        `(west ${duringAgent['west'] ?? 0}); east stopped voting ` +
        `${realSeconds(voteEndedMs)} s after its agent had exited (the exit took ` +
        `${realSeconds(stoppedAt - stopping)} s; bound ` +
        `${realSeconds(scaledMs(VOTE_FRESHNESS_MS + EVALUATION_INTERVAL_MS))} s), its last up ` +
        `still reading ${lastUp?.value[1]} in the lookback (docs/deploy.md); it voted again ` +
        `${(voteBackMs / 1000).toFixed(1)} s (not scaled) after the restart; ${pinged} pings ` +
        `counted across the outage, at the centre ${(caughtUpMs / 1000).toFixed(1)} s (not ` +
        `scaled) after the restart; no page`,
    );
  }, 180_000);

  it('does not page on sustained slowness seen from one location only', async () => {
    const deployment = await startDeployment('one-location');
    await expectRulesHealthy(deployment);
    report.push(await expectNoPageFromOneLocation(deployment));
    expect(await unhealthyRules(deployment.stack.prometheusUrl)).toEqual([]);
  }, 180_000);

  it('pages once for the environment when both locations see it, within the direct bound', async () => {
    const deployment = await startDeployment('both');
    await expectRulesHealthy(deployment);
    const { lines } = await expectOnePageFromBoth(deployment, scaledMs(SEND_DEADLINE_MS));
    report.push(...lines);
    expect(await unhealthyRules(deployment.stack.prometheusUrl)).toEqual([]);
    report.push('  every rule evaluated without error at the centre, before and after');
  }, 180_000);

  it('with both monitors at the same instance, every rule evaluates and a fault seen from both pages once', async () => {
    const deployment = await startDeployment('shared-instance', SHARED_INSTANCE);
    const { stack } = deployment;
    // One instance, two monitors: only their `location` tells them apart.
    const instances = await stack.query('count by (instance) (up{job="isa-monitor"})');
    expect(instances.map((r) => [r.metric['instance'], r.value[1]])).toEqual([
      [SHARED_INSTANCE, String(LOCATIONS.length)],
    ]);
    await expectRulesHealthy(deployment);
    const { lines } = await expectOnePageFromBoth(deployment, scaledMs(SEND_DEADLINE_MS));
    report.push(`  both monitors as instance ${SHARED_INSTANCE}:`, ...lines);
    expect(await unhealthyRules(stack.prometheusUrl)).toEqual([]);
    report.push(
      `  ... ${await ruleCount(stack.prometheusUrl)} rules evaluated without error at the centre, before and after`,
    );
  }, 180_000);
});
