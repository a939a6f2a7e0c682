/** Global fault rules through the /__sim/ admin API: matching, counts, probability, scoping. */
import { describe, expect, it } from 'vitest';
import { body, client, rawRequest, startTestSimulator, type Json } from './helpers.js';

const admin = (base: string) => ({
  add: async (rule: unknown) => {
    const res = await rawRequest(`${base}/__sim/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rule),
    });
    return { status: res.status, body: body(res) };
  },
  list: async () => body(await rawRequest(`${base}/__sim/faults`)),
  clear: () => rawRequest(`${base}/__sim/faults`, { method: 'DELETE' }),
  remove: (id: string) => rawRequest(`${base}/__sim/faults/${id}`, { method: 'DELETE' }),
});

const pingStatuses = async (base: string, n: number) => {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await client(base).get('/ping')).status);
  return out;
};

describe('admin API', () => {
  it('adds a rule (201 with an id), lists it, removes it by id', async () => {
    const sim = await startTestSimulator();
    const a = admin(sim.url);
    const added = await a.add({ endpoint: 'ping', fault: { kind: 'status', status: 500 } });
    expect(added.status).toBe(201);
    expect(added.body.id).toMatch(/^f\d+$/);
    expect((await a.list()).rules).toMatchObject([{ id: added.body.id, endpoint: 'ping' }]);
    expect(await pingStatuses(sim.url, 2)).toEqual([500, 500]);
    expect((await a.remove(added.body.id)).status).toBe(204);
    expect((await a.remove(added.body.id)).status).toBe(404);
    expect(await pingStatuses(sim.url, 1)).toEqual([200]);
  });

  it('rejects an invalid rule with 400 and the reason', async () => {
    const sim = await startTestSimulator();
    const a = admin(sim.url);
    for (const rule of [
      { fault: { kind: 'status', status: 418 } },
      { endpoint: 'everything', fault: { kind: 'hang' } },
      { probability: 2, fault: { kind: 'hang' } },
      { count: 0, fault: { kind: 'hang' } },
      { fault: { kind: 'hang' }, extra: true },
      {},
    ]) {
      const res = await a.add(rule);
      expect(res.status, JSON.stringify(rule)).toBe(400);
      expect(typeof res.body.message).toBe('string');
    }
    expect((await a.list()).rules).toEqual([]);
  });

  it('DELETE /__sim/faults clears every rule', async () => {
    const sim = await startTestSimulator();
    const a = admin(sim.url);
    await a.add({ fault: { kind: 'status', status: 500 } });
    await a.add({ fault: { kind: 'status', status: 502 } });
    expect((await a.clear()).status).toBe(204);
    expect((await a.list()).rules).toEqual([]);
    expect(await pingStatuses(sim.url, 1)).toEqual([200]);
  });

  it('a count expires the rule after N applications', async () => {
    const sim = await startTestSimulator();
    const a = admin(sim.url);
    await a.add({ count: 2, fault: { kind: 'status', status: 503 } });
    expect(await pingStatuses(sim.url, 4)).toEqual([503, 503, 200, 200]);
    expect((await a.list()).rules).toEqual([]);
  });

  it('probability 0 never fires and keeps its count; probability 1 always fires', async () => {
    const sim = await startTestSimulator();
    const a = admin(sim.url);
    await a.add({ probability: 0, count: 1, fault: { kind: 'status', status: 500 } });
    expect(await pingStatuses(sim.url, 3)).toEqual([200, 200, 200]);
    expect((await a.list()).rules[0].remaining).toBe(1);
    await a.clear();
    await a.add({ probability: 1, fault: { kind: 'status', status: 500 } });
    expect(await pingStatuses(sim.url, 3)).toEqual([500, 500, 500]);
  });

  it('a probability between fires for some requests only', async () => {
    const sim = await startTestSimulator();
    await admin(sim.url).add({ probability: 0.5, fault: { kind: 'status', status: 500 } });
    const statuses = await pingStatuses(sim.url, 60);
    const failures = statuses.filter((s) => s === 500).length;
    // Binomial(60, 0.5): outside 10..50 has a probability below 1e-7.
    expect(failures).toBeGreaterThan(10);
    expect(failures).toBeLessThan(50);
  });

  it('scopes a rule to an endpoint', async () => {
    const sim = await startTestSimulator();
    await admin(sim.url).add({
      endpoint: 'service_providers',
      fault: { kind: 'status', status: 500 },
    });
    expect((await client(sim.url).get('/service_providers')).status).toBe(500);
    expect((await client(sim.url).get('/ping')).status).toBe(200);
  });

  it('scopes a rule to an environment (the root is `default`)', async () => {
    const sim = await startTestSimulator();
    const a = admin(sim.url);
    await a.add({ environment: 'production', fault: { kind: 'status', status: 502 } });
    expect(await pingStatuses(`${sim.url}/env/production`, 1)).toEqual([502]);
    expect(await pingStatuses(`${sim.url}/env/sandbox`, 1)).toEqual([200]);
    expect(await pingStatuses(sim.url, 1)).toEqual([200]);
    await a.clear();
    await a.add({ environment: 'default', fault: { kind: 'status', status: 500 } });
    expect(await pingStatuses(sim.url, 1)).toEqual([500]);
    expect(await pingStatuses(`${sim.url}/env/production`, 1)).toEqual([200]);
  });

  it('the per-request header takes precedence over rules; latencies add up', async () => {
    const sim = await startTestSimulator();
    const a = admin(sim.url);
    await a.add({ fault: { kind: 'status', status: 500 } });
    await a.add({ fault: { kind: 'latency', ms: 60 } });
    const res = await client(sim.url).get('/ping', {
      'x-isa-sim-fault': JSON.stringify([
        { kind: 'status', status: 429 },
        { kind: 'latency', ms: 60 },
      ]),
    });
    expect(res.status).toBe(429);
    expect(
      Number(/dur=([\d.]+)/.exec(String(res.headers['server-timing']))?.[1]),
    ).toBeGreaterThanOrEqual(118);
  });

  it('a behaviour rule with a count is used up only by a request it changes', async () => {
    const sim = await startTestSimulator();
    const api = client(sim.url);
    await admin(sim.url).add({ count: 1, fault: { kind: 'not_gone' } });
    const token = String(
      (await api.createSession({ street1: '2 Pending Ave', zip: '80202' })).headers[
        'session_token'
      ],
    );
    expect((await api.get(`/sessions/${token}`)).status).toBe(200); // open: not used up
    await api.delete(`/sessions/${token}`);
    expect((await api.get(`/sessions/${token}`)).status).toBe(200); // closed: the fault applies
    expect((await api.get(`/sessions/${token}`)).status).toBe(410); // and is used up
  });

  it('a qualify rule scoped to creation leaves polls alone', async () => {
    const sim = await startTestSimulator({ qualifyDelayMs: 0 });
    const api = client(sim.url);
    await admin(sim.url).add({
      endpoint: 'poll_services',
      fault: { kind: 'qualify', status: 'retry_later' },
    });
    const created = await api.createSession({ street1: '1 Instant Way', zip: '80202' });
    expect(body(created).qualify_status).toBe('available');
    const polled = await api.get(
      `/sessions/${String(created.headers['session_token'])}/services/internet`,
    );
    expect(body(polled).qualify_status).toBe('retry_later');
  });

  it('GET /__sim/sessions lists sessions, filtered by status and environment', async () => {
    const sim = await startTestSimulator();
    const api = client(sim.url);
    const prod = client(`${sim.url}/env/production`);
    const a = String(
      (await api.createSession({ street1: '2 Pending Ave', zip: '80202' })).headers[
        'session_token'
      ],
    );
    const b = String(
      (await prod.createSession({ street1: '2 Pending Ave', zip: '80202' })).headers[
        'session_token'
      ],
    );
    await api.delete(`/sessions/${a}`);
    const open = body(await rawRequest(`${sim.url}/__sim/sessions?status=open`));
    expect(open.count).toBe(1);
    expect(
      open.sessions.map((s: Json) => [s.session_token, s.environment, s.session_status]),
    ).toEqual([[b, 'production', 'open']]);
    expect(body(await rawRequest(`${sim.url}/__sim/sessions`)).count).toBe(2);
    expect(
      body(await rawRequest(`${sim.url}/__sim/sessions?environment=default`)).sessions[0]
        .session_status,
    ).toBe('closed');
    expect((await rawRequest(`${sim.url}/__sim/sessions?status=ajar`)).status).toBe(400);
    // No API key ever appears in the admin output.
    expect(JSON.stringify(open)).not.toContain('test-key');
  });

  it('POST /__sim/reset forgets sessions and rules', async () => {
    const sim = await startTestSimulator();
    const api = client(sim.url);
    await api.createSession({ street1: '2 Pending Ave', zip: '80202' });
    await admin(sim.url).add({ endpoint: 'coverage', fault: { kind: 'hang' } });
    expect((await rawRequest(`${sim.url}/__sim/reset`, { method: 'POST' })).status).toBe(204);
    expect(sim.state.sessions()).toEqual([]);
    expect((await admin(sim.url).list()).rules).toEqual([]);
  });

  it('answers JSON 404 for unknown admin routes', async () => {
    const sim = await startTestSimulator();
    const res = await rawRequest(`${sim.url}/__sim/nothing`);
    expect(res.status).toBe(404);
    expect(body(res).message).toMatch(/no admin route/);
  });

  it('the controller can be driven directly too (in-process tests)', async () => {
    const sim = await startTestSimulator();
    const id = sim.faults.add({
      endpoint: 'ping',
      count: 1,
      fault: { kind: 'status', status: 401 },
    });
    expect(sim.faults.rules().map((r) => r.id)).toEqual([id]);
    expect(await pingStatuses(sim.url, 2)).toEqual([401, 200]);
    expect(() => sim.faults.add({ fault: { kind: 'nope' } } as never)).toThrow();
  });
});
