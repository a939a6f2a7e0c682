/**
 * A week of the healthy simulator, on a compressed clock, at the default schedule of the checks
 * (docs/configuration.md): a ping a minute, a lifecycle run every 5 minutes (create, a poll every
 * 2 s until qualified, get, close, the closed session's 410), the analytics sync and lookups a
 * minute, and the checks whose runs are stateless reads (ping, the provider list, coverage with
 * its refused request without geography) as their fixtures give them (`driftReads`). Every answer goes to the drift model, in two environments. Free text, identifiers,
 * timestamps, counts and the answers the spec allows are not drift: no difference may open.
 */
import { afterAll, expect, it } from 'vitest';
import type { DriftBook, DriftCounts } from '../../src/drift/book.js';
import { readDriftState } from '../../src/drift/store.js';
import { RESPONSE_SCHEMAS } from '../../src/checks/index.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { DRIFT_READS } from '../support/check-fixtures.js';
import { testClock, type TestClock } from '../simulator/helpers.js';
import {
  driftClient,
  KEY,
  scratchBook,
  totalOpen,
  writeErrors,
  type DriftClient,
} from './simulated.js';

const START = Date.parse('2026-11-02T00:00:00Z');
const MINUTE = 60_000;
/**
 * Simulated days: six hours in the suite (the learning hour and five of comparing, about 4 500
 * answers); `DRIFT_WEEK_DAYS=7` runs the week (bench/README.md).
 */
const DAYS = Number(process.env['DRIFT_WEEK_DAYS'] ?? 0.25);
const ENVIRONMENTS = ['sandbox', 'production'];
const POLL_INTERVAL_MS = 2_000;
const POLL_TIMEOUT_MS = 90_000;
const MAX_PAGES = 10;
const MAX_LOOKUPS = 5;
const TERMINAL = new Set(['available', 'no_service', 'failed']);

/**
 * Lifecycle addresses in rotation: ordinary buildings, which the simulator qualifies by a hash
 * (mostly available, some no_service, retry_later or failed), and the spec's other outcomes. One
 * address alone would be answered from the 15-minute cache at every 5-minute run, and never polled.
 */
const ADDRESSES = [
  { street1: '123 Main St', zip: '80202' },
  { street1: '1600 Larimer St', zip: '80202' },
  { street1: '2 Pending Ave', zip: '80202' },
  { street1: '410 17th St', zip: '80202' },
  { street1: '3 No Service Rd', city: 'Denver', state: 'CO' },
  { street1: '1701 Wynkoop St', zip: '80202' },
  { street1: '5 Retry Ln', zip: '80202' },
  { street1: '1144 15th St', zip: '80202' },
  { street1: '4 Failed Blvd', zip: '80202' },
  { street1: '999 18th St', street2: 'Suite 300', zip: '80202' },
  { street1: '1801 California St', zip: '80202' },
  { street1: '2001 Blake St', zip: '80205' },
];

interface Watched {
  environment: string;
  client: DriftClient;
  lastSyncAt: string;
  awaiting: string[];
  nextAddress: number;
}

let sim: RunningSimulator | undefined;
let book: DriftBook | undefined;
afterAll(async () => {
  await book?.close();
  await sim?.close();
});

type Body = Record<string, unknown> & { meta?: Record<string, unknown> };

/** One lifecycle run, as the lifecycle check makes it; moves the clock by its polls. */
async function lifecycle(w: Watched, clock: TestClock): Promise<void> {
  const address = ADDRESSES[w.nextAddress++ % ADDRESSES.length];
  const created = await w.client.send('create_session', 'POST', '/sessions', {}, address);
  if (created.status !== 201) throw new Error(`create answered ${created.status}`);
  const body = created.body as Body;
  const token = String(body.meta?.['session_token']);
  const createdAt = clock.now();
  let status = String(body['qualify_status']);
  while (!TERMINAL.has(status) && clock.now() - createdAt + POLL_INTERVAL_MS <= POLL_TIMEOUT_MS) {
    clock.advance(POLL_INTERVAL_MS);
    const poll = await w.client.send(
      'poll_services',
      'GET',
      `/sessions/${token}/services/internet`,
    );
    status = String((poll.body as Body)['qualify_status']);
  }
  await w.client.send('get_session', 'GET', `/sessions/${token}`);
  await w.client.send('close_session', 'DELETE', `/sessions/${token}`);
  const gone = await w.client.send('verify_gone', 'GET', `/sessions/${token}`);
  if (gone.status !== 410) throw new Error(`closed session answered ${gone.status}`);
  w.awaiting.push(token);
}

/** One analytics run: the incremental sync, every page, then the awaited sessions' lookups. */
async function analytics(w: Watched): Promise<void> {
  let pages = 1;
  let nextSyncAt: string | null = null;
  for (let page = 1; page <= Math.min(pages, MAX_PAGES); page += 1) {
    const query = `updated_since=${encodeURIComponent(w.lastSyncAt)}&page=${page}`;
    const list = await w.client.send(
      'list_analytics_sessions',
      'GET',
      `/analytics/sessions?${query}`,
    );
    const meta = (list.body as Body).meta ?? {};
    if (page === 1) nextSyncAt = String(meta['responded_at']);
    pages = Number(meta['pages']);
  }
  if (nextSyncAt !== null) w.lastSyncAt = nextSyncAt;
  for (const token of w.awaiting.slice(0, MAX_LOOKUPS)) {
    const found = await w.client.send(
      'get_analytics_session',
      'GET',
      `/analytics/sessions/${token}`,
    );
    if (found.status === 200) w.awaiting.splice(w.awaiting.indexOf(token), 1);
  }
}

/** The checks whose runs are stateless reads, each at its default interval. */
async function reads(w: Watched, minute: number): Promise<void> {
  for (const { everyMinutes, reads } of DRIFT_READS) {
    if (minute % everyMinutes !== 0) continue;
    for (const read of reads) await w.client.send(read.operation, 'GET', read.path);
  }
}

/** The minute `minute` of the week in one environment, at the checks' default intervals. */
async function minuteOf(w: Watched, minute: number, clock: TestClock): Promise<void> {
  await reads(w, minute);
  await analytics(w);
  if (minute % 5 === 0) await lifecycle(w, clock);
}

it(
  'a healthy week at the default schedule opens no difference',
  async () => {
    const clock = testClock(START);
    sim = await startSimulator({ apiKeys: [KEY], now: clock.now, mode: 'realistic', port: 0 });
    const changes: { environment: string; operation: string; counts: DriftCounts }[] = [];
    // A new operation is reported with its zero counts at its first answer; any other change
    // is a difference opening or closing.
    const scratch = await scratchBook(clock.now, (environment, operation, counts) => {
      if (counts.breaking + counts.warning + counts.info > 0)
        changes.push({ environment, operation, counts });
    });
    book = scratch.book;
    let fed = 0;
    const watched: Watched[] = ENVIRONMENTS.map((environment) => {
      const client = driftClient(sim!.url, environment, book!);
      const counted: DriftClient = {
        ...client,
        send: (...args) => {
          fed += 1;
          return client.send(...args);
        },
      };
      const lastSyncAt = new Date(START - 60 * MINUTE).toISOString();
      return { environment, client: counted, lastSyncAt, awaiting: [], nextAddress: 0 };
    });

    for (let minute = 0; minute < DAYS * 24 * 60; minute += 1) {
      // A lifecycle run's polls may carry the clock past the minute; time never goes back.
      clock.set(Math.max(clock.now(), START + minute * MINUTE));
      for (const w of watched) await minuteOf(w, minute, clock);
    }
    for (const w of watched) w.client.close();
    await book.sync(true);

    const { state } = await readDriftState(scratch.path);
    const settled = Object.entries(state).flatMap(([environment, operations]) =>
      Object.entries(operations)
        .filter(([, drift]) => drift.learningSince === null)
        .map(([operation]) => `${environment} ${operation}`),
    );
    console.log(`healthy week: ${fed} responses fed, ${totalOpen(book)} differences open`);
    expect(settled.sort()).toEqual(
      ENVIRONMENTS.flatMap((environment) =>
        [
          'create_session',
          'error',
          'get_analytics_session',
          'get_session',
          'close_session',
          'list_analytics_sessions',
          'poll_services',
          // The reads answered with a body of their own; a refusal is an error envelope.
          ...DRIFT_READS.flatMap((check) => check.reads.map((read) => read.operation)).filter(
            (operation) => RESPONSE_SCHEMAS[operation] !== undefined,
          ),
        ].map((operation) => `${environment} ${operation}`),
      ).sort(),
    );
    expect(changes).toEqual([]);
    expect(totalOpen(book)).toBe(0);
    await book.close();
    expect(writeErrors).toEqual([]);
  },
  Math.max(2, DAYS * 5) * 60_000,
);
