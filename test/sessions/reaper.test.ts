/**
 * Only a real close counts as closed (finding 3 of the "share one ledger" issue): a DELETE answered
 * 400 or 404 (a proxy, a misrouted request) made the reaper forget a session still open on the
 * API. Now only a 200, or a 410 with the API's own error envelope, removes a token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { startProxiedSimulator, type FuzzProxy, type Mutation } from '../chaos/proxy.js';
import { testEnvironment, testRuntime } from '../support/harness.js';
import { closeSession, createSession } from '../../src/api/sessions.js';

let sim: RunningSimulator;
let proxy: FuzzProxy;
let stop: () => Promise<void>;
let n = 0;
beforeAll(async () => {
  ({ sim, proxy, close: stop } = await startProxiedSimulator());
});
afterAll(() => stop());

/** A session created through the API, listed in a fresh ledger, then reaped once. */
async function reapOnce(close: Mutation | null, closeFirst = false) {
  const name = `rp${n++}`;
  const config = testEnvironment(`${proxy.url}/env/${name}`, { name });
  const { runtime, ledger } = await testRuntime(config);
  proxy.plan = () => null;
  const created = await createSession(
    runtime.client,
    { street1: '1 Instant Way', zip: '80202', campaign_id: 'reaper-test' },
    { timeoutMs: 2_000 },
  );
  const token = created.headers['session_token'] ?? '';
  if (closeFirst) await closeSession(runtime.client, token, { timeoutMs: 2_000 });
  await ledger.add(name, token);
  proxy.plan = (req) => (req.endpoint === 'close_session' ? close : null);
  await runtime.reaper.sweep({ force: true });
  await runtime.close();
  return { listed: ledger.list(name).map((e) => e.token), token, name };
}

describe('the reaper counts only a real close', () => {
  it.each([
    ['400', { forward: false, status: 400 }],
    ['404', { forward: false, status: 404 }],
    [
      '410 without the API envelope',
      {
        forward: false,
        status: 410,
        setHeaders: { 'content-type': 'text/html' },
        body: '<h1>Gone</h1>',
      },
    ],
    ['500', { forward: false, status: 500 }],
    ['401', { forward: false, status: 401 }],
  ] as Array<[string, Mutation]>)('keeps the token after %s', async (_what, mutation) => {
    const { listed, token, name } = await reapOnce(mutation);
    expect(listed).toEqual([token]);
    expect(sim.state.openSessions(name)).toHaveLength(1);
  });

  it('forgets the token after a 200', async () => {
    const { listed, name } = await reapOnce(null);
    expect(listed).toEqual([]);
    expect(sim.state.openSessions(name)).toEqual([]);
  });

  it("forgets the token after the API's own 410", async () => {
    const { listed } = await reapOnce(null, true);
    expect(listed).toEqual([]);
  });
});
