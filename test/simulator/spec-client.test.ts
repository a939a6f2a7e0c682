/**
 * A client written from the spec alone, unmodified: create a session, poll the internet-services
 * endpoint at a fixed interval while the status is pending or retry_later, give up after a
 * deadline (unknown, never no_service), read the session, close it, expect 410 afterwards.
 *
 * The test addresses run on a clock the client moves: each poll interval advances the simulator's
 * clock by exactly that much, so every stage is seen however slow the machine is (on the real
 * clock, one stalled 25 ms poll could skip the whole 150 ms `pending` stage of `5 Retry Ln`).
 * The fast-mode case keeps the real clock, as a partner's integration test would.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { client, body, startTestSimulator, testClock } from './helpers.js';

/** Where the client reads the time and waits out a poll interval. */
interface ClientClock {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

const REAL_CLOCK: ClientClock = { now: () => performance.now(), sleep: (ms) => delay(ms) };

interface Outcome {
  final: string;
  polls: string[];
  closedStatus: number;
  afterClose: number;
}

async function specClient(
  baseUrl: string,
  street1: string,
  pollIntervalMs: number,
  giveUpMs: number,
  clock: ClientClock = REAL_CLOCK,
): Promise<Outcome> {
  const api = client(baseUrl);
  const created = await api.createSession({ street1, zip: '80202' });
  if (created.status !== 201) throw new Error(`create answered ${created.status}`);
  const token = String(created.headers['session_token']);
  let status: string = body(created).qualify_status;
  const polls: string[] = [];
  const deadline = clock.now() + giveUpMs;
  while (status === 'pending' || status === 'retry_later') {
    if (clock.now() > deadline) {
      status = 'timeout';
      break;
    }
    await clock.sleep(pollIntervalMs);
    const polled = await api.get(`/sessions/${token}/services/internet`);
    status = body(polled).qualify_status;
    polls.push(status);
  }
  expect((await api.get(`/sessions/${token}`)).status).toBe(200);
  const closed = await api.delete(`/sessions/${token}`);
  const after = await api.get(`/sessions/${token}`);
  return { final: status, polls, closedStatus: closed.status, afterClose: after.status };
}

describe('a spec-following client', () => {
  it.each([
    ['2 Pending Ave', 'available'],
    ['3 No Service Rd', 'no_service'],
    ['4 Failed Blvd', 'failed'],
    ['5 Retry Ln', 'available'],
    ['6 Forever Pending Ct', 'timeout'],
  ])('%s ends %s, closes the session and then gets 410', async (street1, expected) => {
    const time = testClock();
    const sim = await startTestSimulator({ qualifyDelayMs: 150, now: time.now });
    const clock: ClientClock = { now: time.now, sleep: async (ms) => time.advance(ms) };
    const outcome = await specClient(sim.url, street1, 25, 700, clock);
    expect(outcome.final).toBe(expected);
    expect(outcome.closedStatus).toBe(200);
    expect(outcome.afterClose).toBe(410);
    expect(sim.state.openSessions()).toEqual([]);
    if (street1 === '5 Retry Ln') {
      expect(outcome.polls).toContain('retry_later');
      expect(outcome.polls).toContain('pending');
      expect(outcome.polls.indexOf('pending')).toBeGreaterThan(
        outcome.polls.indexOf('retry_later'),
      );
      // 150 ms of retry_later, 150 ms of pending, polled every 25 ms from creation.
      expect(outcome.polls).toEqual([
        ...Array<string>(5).fill('retry_later'),
        ...Array<string>(6).fill('pending'),
        'available',
      ]);
    }
  });

  it('works the same in fast mode defaults against a named environment', async () => {
    const sim = await startTestSimulator({ qualifyDelayMs: undefined, mode: 'fast' });
    const started = performance.now();
    const outcome = await specClient(`${sim.url}/env/sandbox`, '1 Instant Way', 50, 5000);
    expect(outcome.final).toBe('available');
    expect(outcome.polls).toEqual([]);
    expect(outcome.afterClose).toBe(410);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
