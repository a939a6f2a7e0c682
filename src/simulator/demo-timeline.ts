/**
 * The scripted fault timeline of demo mode: a 30-minute loop in which `production` walks through
 * every kind of trouble the monitor's dashboards and alerts know about, while `sandbox` stays
 * mostly healthy with short blips. Phases are long enough for the sustained-window alerts (about
 * seven minutes of critical latency at one ping a minute) and short enough that a demo viewer
 * sees each panel move within minutes.
 */
import type { TimelineEntry, TimelineRule } from './faults.js';

/** Length of one loop of the demo timeline. */
export const DEMO_TIMELINE_PERIOD_MS = 30 * 60_000;

/** Analytics ingestion stops; sessions created meanwhile appear when it resumes. */
const ingestStall: TimelineRule = { fault: { kind: 'ingest_stall' } };

/**
 * A sandbox-only contract drift: a new `qualify_status` value in two polls, neither in the spec
 * nor in production; the drift model reports it as a warning once its baseline has learned.
 */
const sandboxOnlyDrift: TimelineRule = {
  endpoint: 'poll_services',
  count: 2,
  fault: { kind: 'drift', change: 'new_value', path: 'qualify_status', value: 'queued' },
};

/** Background latency of a healthy environment: realistic jitter under the 100 ms expectation. */
const healthy = (min = 20, max = 80): TimelineRule => ({
  fault: { kind: 'latency', distribution: { min, max } },
});

/**
 * Production, by minute of the loop:
 * - 0–2 healthy (20–80 ms);
 * - 2–8 slow: 600–900 ms on every endpoint (latency warning);
 * - 8–15 critical: 1100–1800 ms (pages after the sustained window);
 * - 15–19 server errors: half the requests 500, some 502, some hang until the client gives up;
 * - 19–25 pending storm: most new sessions stay pending or retry_later (qualify timeouts), and
 *   some polls answer retry_later;
 * - 25–28 contract trouble: closed sessions answer 200 instead of 410, half the closes fail
 *   (leaked synthetic sessions);
 * - 28–30 recovery.
 *
 * Sandbox: healthy (15–60 ms) with blips: a few 429s at minute 5, a few 401s at 12, slow answers
 * (700–900 ms) at 18 and one closed session not gone at 24. At 24 the sandbox also drifts from
 * its contract where production does not: two polls answer a `qualify_status` the spec does not
 * have (`queued`), the change a partner's sandbox often gets first (docs/drift.md). From minute
 * 8 to 15 its analytics ingestion stalls: new sessions do not reach analytics until the stall
 * ends (late sessions, then a burst of long ingest lags).
 *
 * Both: the provider list gains a provider at minute 10; the loop's start restores it.
 */
export const DEMO_TIMELINE: TimelineEntry[] = [
  { at: '0s', environment: 'production', faults: [healthy()] },
  {
    at: '2m',
    environment: 'production',
    faults: [{ fault: { kind: 'latency', distribution: { min: 600, max: 900 } } }],
  },
  {
    at: '8m',
    environment: 'production',
    faults: [{ fault: { kind: 'latency', distribution: { min: 1100, max: 1800 } } }],
  },
  {
    at: '15m',
    environment: 'production',
    faults: [
      healthy(30, 150),
      { probability: 0.5, fault: { kind: 'status', status: 500 } },
      { probability: 0.3, fault: { kind: 'status', status: 502 } },
      { probability: 0.15, fault: { kind: 'hang' } },
    ],
  },
  {
    at: '19m',
    environment: 'production',
    faults: [
      healthy(),
      {
        endpoint: 'create_session',
        probability: 0.5,
        fault: { kind: 'qualify', status: 'pending' },
      },
      {
        endpoint: 'create_session',
        probability: 0.5,
        fault: { kind: 'qualify', status: 'retry_later' },
      },
      {
        endpoint: 'poll_services',
        probability: 0.2,
        fault: { kind: 'qualify', status: 'retry_later' },
      },
    ],
  },
  {
    at: '25m',
    environment: 'production',
    faults: [
      healthy(),
      { fault: { kind: 'not_gone' } },
      { endpoint: 'close_session', probability: 0.5, fault: { kind: 'close_fail', status: 500 } },
    ],
  },
  { at: '28m', environment: 'production', faults: [healthy()] },

  { at: '0s', environment: 'sandbox', faults: [healthy(15, 60)] },
  {
    at: '5m',
    environment: 'sandbox',
    faults: [healthy(15, 60), { count: 4, fault: { kind: 'status', status: 429 } }],
  },
  { at: '8m', environment: 'sandbox', faults: [healthy(15, 60), ingestStall] },
  {
    at: '12m',
    environment: 'sandbox',
    faults: [healthy(15, 60), ingestStall, { count: 4, fault: { kind: 'status', status: 401 } }],
  },
  { at: '15m', environment: 'sandbox', faults: [healthy(15, 60)] },
  {
    at: '18m',
    environment: 'sandbox',
    faults: [{ fault: { kind: 'latency', distribution: { min: 700, max: 900 } } }],
  },
  { at: '20m', environment: 'sandbox', faults: [healthy(15, 60)] },
  {
    at: '24m',
    environment: 'sandbox',
    faults: [healthy(15, 60), { count: 1, fault: { kind: 'not_gone' } }, sandboxOnlyDrift],
  },
  { at: '27m', environment: 'sandbox', faults: [healthy(15, 60)] },

  // Every environment: the provider list gains a provider at minute 10 and loses it again when
  // the loop starts over, so the list-change counter moves in each loop.
  { at: '0s', faults: [] },
  {
    at: '10m',
    faults: [{ endpoint: 'service_providers', fault: { kind: 'provider_list', change: 'added' } }],
  },

  { at: DEMO_TIMELINE_PERIOD_MS, repeat: true },
];
