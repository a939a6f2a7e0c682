/**
 * The daemon at an interval no cron step divides (docs/configuration.md, "Intervals"): a real
 * process pinging a loopback simulator every 1500 ms. The pings arrive at that spacing, each at
 * `k × 1500 ms + offset` of the wall clock, whatever the offset.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSimulator, type TestSimulator } from '../support/harness.js';
import { API_KEY } from '../support/harness.js';
import { eventually, startDaemonProcess } from '../support/cli.js';
import { writeDaemonConfig } from '../support/daemon-config.js';

const INTERVAL_MS = 1_500;

/** The ping's offset from the daemon's "schedules started" line (docs/configuration.md). */
function loggedPingOffset(output: string): number {
  for (const line of output.split('\n')) {
    if (!line.includes('"schedules started"')) continue;
    const { schedule } = JSON.parse(line) as {
      schedule: Array<{ check: string; intervalMs: number; offsetMs: number }>;
    };
    const ping = schedule.find((task) => task.check === 'ping');
    expect(ping?.intervalMs).toBe(INTERVAL_MS);
    return ping!.offsetMs;
  }
  throw new Error(`no "schedules started" line in:\n${output}`);
}

/** How long after its nearest due instant (k × interval + offset) `unixMs` is: negative if before. */
function afterInstant(unixMs: number, offsetMs: number): number {
  const phase = (((unixMs - offsetMs) % INTERVAL_MS) + INTERVAL_MS) % INTERVAL_MS;
  return phase < INTERVAL_MS / 2 ? phase : phase - INTERVAL_MS;
}

let sim: TestSimulator;
beforeAll(async () => {
  sim = await startTestSimulator();
});
afterAll(() => sim.close());

describe('a 1500 ms ping interval', () => {
  it('pings at that spacing', async () => {
    const { path } = await writeDaemonConfig(sim.url, {
      ping: '{ interval: 1500ms, timeout: 500ms }',
      lifecycle: { enabled: 'false' },
    });
    const daemon = startDaemonProcess(['--config', path], { ISA_PRODUCTION_API_KEY: API_KEY });
    try {
      const pings = () => sim.requests.filter((r) => r.path === '/ping');
      await eventually(() => pings().length >= 8, 30_000, '8 pings');
      const gaps = pings()
        .slice(0, 8)
        .map((r, i, all) => (i === 0 ? null : r.at - all[i - 1]!.at))
        .filter((gap): gap is number => gap !== null)
        .sort((a, b) => a - b);
      // Arrival times carry the machine's scheduling noise; the median gap is the interval.
      const median = gaps[Math.floor(gaps.length / 2)]!;
      expect(Math.abs(median - 1_500)).toBeLessThan(50);
      expect(gaps.every((gap) => gap > 1_000 && gap < 2_000)).toBe(true);

      // Each ping is due at k × 1500 ms + offsetMs of Unix time, the offset the daemon drew and
      // logged: how far after its instant each arrived, from the same clock. A schedule that
      // ignored the offset, or drifted, would leave them anywhere in the period.
      const offsetMs = loggedPingOffset(daemon.output());
      const lateness = pings()
        .slice(0, 8)
        .map((r) => afterInstant(performance.timeOrigin + r.at, offsetMs))
        .sort((a, b) => a - b);
      const medianLateness = lateness[Math.floor(lateness.length / 2)]!;
      expect(medianLateness, `lateness ${lateness.join(', ')} ms`).toBeGreaterThan(-5);
      expect(medianLateness, `lateness ${lateness.join(', ')} ms`).toBeLessThan(60);
      expect(lateness[0]!, `lateness ${lateness.join(', ')} ms`).toBeGreaterThan(-50);
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exit;
    }
  });
});
