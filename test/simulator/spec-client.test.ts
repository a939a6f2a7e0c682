/**
 * A client written from the spec alone, unmodified: create a session, poll the internet-services
 * endpoint at a fixed interval while the status is pending or retry_later, give up after a
 * deadline (unknown, never no_service), read the session, close it, expect 410 afterwards.
 * Runs on the real clock with short delays, as a partner's integration test would.
 */
import { describe, expect, it } from 'vitest';
import { client, body, startTestSimulator } from './helpers.js';

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
): Promise<Outcome> {
  const api = client(baseUrl);
  const created = await api.createSession({ street1, zip: '80202' });
  if (created.status !== 201) throw new Error(`create answered ${created.status}`);
  const token = String(created.headers['session_token']);
  let status: string = body(created).qualify_status;
  const polls: string[] = [];
  const deadline = performance.now() + giveUpMs;
  while (status === 'pending' || status === 'retry_later') {
    if (performance.now() > deadline) {
      status = 'timeout';
      break;
    }
    await new Promise((r) => setTimeout(r, pollIntervalMs));
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
    const sim = await startTestSimulator({ qualifyDelayMs: 150 });
    const outcome = await specClient(sim.url, street1, 25, 700);
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
