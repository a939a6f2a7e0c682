/**
 * Network paths: the same service reached under `/via/<name>/`, as two monitoring locations reach
 * one API over different networks. State is shared; faults scoped to a path and rate-limit
 * budgets are not.
 */
import { describe, expect, it } from 'vitest';
import { body, client, rawRequest, startTestSimulator, testClock } from './helpers.js';

const addRule = (base: string, rule: unknown) =>
  rawRequest(`${base}/__sim/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });

/** The simulator's own time for a request, from its Server-Timing header. */
const simMs = (headers: Record<string, unknown>): number =>
  Number(/dur=([\d.]+)/.exec(String(headers['server-timing']))?.[1]);

describe('network paths (/via/<name>/)', () => {
  it('serves one stateful environment under every path: a session made over one is seen over the other', async () => {
    const sim = await startTestSimulator();
    const east = client(`${sim.url}/via/east/env/production`);
    const west = client(`${sim.url}/via/west/env/production`);
    const created = await east.createSession({ street1: '1 Instant Way', zip: '80202' });
    expect(created.status).toBe(201);
    const token = String(created.headers['session_token']);

    expect((await west.get(`/sessions/${token}`)).status).toBe(200);
    expect((await client(`${sim.url}/env/production`).get(`/sessions/${token}`)).status).toBe(200);
    // Still the production environment: another environment over the same path does not know it.
    expect((await client(`${sim.url}/via/west/env/sandbox`).get(`/sessions/${token}`)).status).toBe(
      400,
    );
    expect(sim.state.sessions({ environment: 'production' })).toHaveLength(1);
    expect(body(await west.get('/ping')).message).toBe('pong');
  });

  it('applies a rule scoped to a path only to requests over that path', async () => {
    const sim = await startTestSimulator();
    const added = await addRule(sim.url, {
      environment: 'production',
      via: 'east',
      endpoint: 'ping',
      fault: { kind: 'status', status: 503 },
    });
    expect(added.status).toBe(201);
    expect(body(added).rule).toMatchObject({ via: 'east' });

    expect((await client(`${sim.url}/via/east/env/production`).get('/ping')).status).toBe(503);
    expect((await client(`${sim.url}/via/west/env/production`).get('/ping')).status).toBe(200);
    expect((await client(`${sim.url}/env/production`).get('/ping')).status).toBe(200);
    expect((await client(`${sim.url}/via/east/env/sandbox`).get('/ping')).status).toBe(200);
  });

  it('applies a rule without a path to every path: trouble in the API itself', async () => {
    const sim = await startTestSimulator();
    sim.faults.add({ environment: 'production', fault: { kind: 'status', status: 500 } });
    for (const base of ['/via/east/env/production', '/via/west/env/production', '/env/production'])
      expect((await client(`${sim.url}${base}`).get('/ping')).status, base).toBe(500);
  });

  it('adds latency only over the path it is scoped to', async () => {
    const sim = await startTestSimulator();
    sim.faults.add({
      environment: 'production',
      via: 'east',
      endpoint: 'ping',
      fault: { kind: 'latency', ms: 300 },
    });
    const slow = await client(`${sim.url}/via/east/env/production`).get('/ping');
    const fast = await client(`${sim.url}/via/west/env/production`).get('/ping');
    expect(slow.status).toBe(200);
    expect(simMs(slow.headers)).toBeGreaterThanOrEqual(300);
    expect(slow.elapsedMs).toBeGreaterThanOrEqual(300);
    expect(simMs(fast.headers)).toBeLessThan(300);
  });

  it('uses up a counted rule only on requests over its path', async () => {
    const sim = await startTestSimulator();
    sim.faults.add({ via: 'east', count: 2, fault: { kind: 'status', status: 502 } });
    const west = client(`${sim.url}/via/west/ping`);
    const east = client(`${sim.url}/via/east/ping`);
    for (let i = 0; i < 3; i++) expect((await west.get('')).status).toBe(200);
    expect([(await east.get('')).status, (await east.get('')).status]).toEqual([502, 502]);
    expect((await east.get('')).status).toBe(200);
    expect(sim.faults.rules()).toEqual([]);
  });

  it('scopes timeline rules to a path too', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({
      now: clock.now,
      timeline: [
        {
          at: '10s',
          environment: 'production',
          faults: [{ via: 'west', fault: { kind: 'status', status: 504 } }],
        },
      ],
    });
    const west = client(`${sim.url}/via/west/env/production`);
    expect((await west.get('/ping')).status).toBe(200);
    clock.advance(10_000);
    expect((await west.get('/ping')).status).toBe(504);
    expect((await client(`${sim.url}/via/east/env/production`).get('/ping')).status).toBe(200);
  });

  it('gives each path its own rate-limit budget, as another client network', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({
      now: clock.now,
      rateLimit: { perSecond: 2, analyticsPerMinute: 100 },
    });
    const east = client(`${sim.url}/via/east/env/production`);
    for (let i = 0; i < 2; i++) expect((await east.get('/ping')).status).toBe(200);
    expect((await east.get('/ping')).status).toBe(429);
    expect((await client(`${sim.url}/via/west/env/production`).get('/ping')).status).toBe(200);
    expect((await client(`${sim.url}/env/production`).get('/ping')).status).toBe(200);
  });

  it('rejects a path name that could not appear in a URL, and a stalled ingestion scoped to a path', async () => {
    const sim = await startTestSimulator();
    for (const rule of [
      { via: 'east/west', fault: { kind: 'hang' } },
      { via: '', fault: { kind: 'hang' } },
      { via: 'east', fault: { kind: 'ingest_stall' } },
    ]) {
      const res = await addRule(sim.url, rule);
      expect(res.status, JSON.stringify(rule)).toBe(400);
      expect(String(body(res).message)).toMatch(/via/);
    }
    expect(sim.faults.rules()).toEqual([]);
  });

  it('answers an unknown route under a path like any unknown route', async () => {
    const sim = await startTestSimulator();
    const res = await rawRequest(`${sim.url}/via/east/nowhere`, {
      headers: { accept: 'application/json' },
    });
    expect(res.status).toBe(404);
    expect((await rawRequest(`${sim.url}/via/east/__sim/faults`)).status).toBe(404);
  });
});
