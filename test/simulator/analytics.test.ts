import { describe, expect, it } from 'vitest';
import { errorEnvelopeSchema } from '../../src/api/schemas.js';
import {
  analyticsDetailResponseSchema,
  analyticsListResponseSchema,
} from '../../src/simulator/schemas.js';
import { OTHER_KEY, body, client, startTestSimulator, testClock } from './helpers.js';

async function setup() {
  const clock = testClock();
  const sim = await startTestSimulator({ now: clock.now });
  return { clock, sim, api: client(sim.url), other: client(sim.url, OTHER_KEY) };
}

const list = async (api: ReturnType<typeof client>, query = '') => {
  const res = await api.get(`/analytics/sessions${query}`);
  expect(res.status, query).toBe(200);
  return analyticsListResponseSchema.parse(body(res));
};

describe('GET /analytics/sessions', () => {
  it('pages 50 at a time with page, pages and count in meta', async () => {
    const { api } = await setup();
    const first = await list(api);
    expect(first.meta.page).toBe(1);
    expect(first.meta.count).toBeGreaterThan(100);
    expect(first.meta.pages).toBe(Math.ceil(first.meta.count / 50));
    expect(first.data).toHaveLength(50);
    const ids = new Set<string>();
    for (let page = 1; page <= first.meta.pages; page++) {
      const p = await list(api, `?page=${page}`);
      expect(p.meta.page).toBe(page);
      p.data.forEach((r) => ids.add(r.id));
    }
    expect(ids.size).toBe(first.meta.count);
    expect((await list(api, `?page=${first.meta.pages + 1}`)).data).toEqual([]);
  });

  it.each(['0', '-1', 'two', '1.5'])('answers 400 to page=%s', async (page) => {
    const { api } = await setup();
    const res = await api.get(`/analytics/sessions?page=${page}`);
    expect(res.status).toBe(400);
    expect(errorEnvelopeSchema.safeParse(body(res)).success).toBe(true);
  });

  it('has orders, installs and commissions in the seeded history, newest first', async () => {
    const { api } = await setup();
    const rows = (await list(api)).data;
    const created = rows.map((r) => Date.parse(r.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    const all = [];
    for (let page = 1; page <= 3; page++) all.push(...(await list(api, `?page=${page}`)).data);
    expect(all.some((r) => r.status === 'complete' && r.order_number !== null)).toBe(true);
    expect(all.some((r) => r.installed === true && r.commission_cents !== null)).toBe(true);
    expect(all.some((r) => r.order_number === null && r.status === null)).toBe(true);
    expect(new Set(all.map((r) => r.context))).toEqual(new Set(['move_in', 'move_out']));
  });

  it('filters on creation time with start_date and end_date (inclusive, bare dates whole days)', async () => {
    const { api, clock } = await setup();
    const start = new Date(clock.now() - 10 * 86_400_000).toISOString();
    const end = new Date(clock.now() - 3 * 86_400_000).toISOString();
    const page = await list(api, `?start_date=${start}&end_date=${end}`);
    expect(page.meta.count).toBeGreaterThan(0);
    for (const r of page.data) {
      expect(Date.parse(r.created_at)).toBeGreaterThanOrEqual(Date.parse(start));
      expect(Date.parse(r.created_at)).toBeLessThanOrEqual(Date.parse(end));
    }
    const day = new Date(clock.now() - 5 * 86_400_000).toISOString().slice(0, 10);
    const oneDay = await list(api, `?start_date=${day}&end_date=${day}`);
    for (const r of oneDay.data) expect(r.created_at.slice(0, 10)).toBe(day);
    expect((await api.get('/analytics/sessions?start_date=yesterday')).status).toBe(400);
  });

  it('orders by most recent change with updated_since and ignores an invalid value', async () => {
    const { api, clock } = await setup();
    const all = await list(api);
    // An order placed long after a session was created shows up in an updated_since sync.
    const since = new Date(clock.now() - 7 * 86_400_000).toISOString();
    const changed = await list(api, `?updated_since=${since}`);
    expect(changed.meta.count).toBeGreaterThan(0);
    expect(changed.meta.count).toBeLessThan(all.meta.count);
    expect(changed.data.some((r) => Date.parse(r.created_at) < Date.parse(since))).toBe(true);
    const invalid = await list(api, '?updated_since=not-a-date');
    expect(invalid.meta.count).toBe(all.meta.count);
    expect(invalid.data).toEqual(all.data);
  });

  it('puts a session closed just now first in an updated_since sync', async () => {
    const { api, clock } = await setup();
    const created = await api.createSession({ street1: '1 Instant Way', zip: '80202' });
    const token = String(created.headers['session_token']);
    clock.advance(60_000);
    const syncPoint = new Date(clock.now()).toISOString();
    clock.advance(60_000);
    await api.delete(`/sessions/${token}`);
    const changed = await list(api, `?updated_since=${syncPoint}`);
    expect(changed.meta.count).toBe(1);
    expect(changed.data[0]?.address.street1).toBe('1 Instant Way');
  });

  it('answers 403 when token_ids[] names a token the caller does not own', async () => {
    const { api, other } = await setup();
    const mine = String(
      (await api.createSession({ street1: '1 Instant Way', zip: '80202' })).headers[
        'session_token'
      ],
    );
    const theirs = String(
      (await other.createSession({ street1: '1 Instant Way', zip: '80202' })).headers[
        'session_token'
      ],
    );
    const own = await list(api, `?token_ids[]=${mine}`);
    expect(own.meta.count).toBe(1);
    for (const q of [
      `?token_ids[]=${theirs}`,
      `?token_ids[]=${mine}&token_ids[]=${theirs}`,
      '?token_ids[]=made-up',
    ]) {
      const res = await api.get(`/analytics/sessions${q}`);
      expect(res.status, q).toBe(403);
      expect(errorEnvelopeSchema.parse(body(res)).request_status).toBe('warning');
    }
  });

  it('keeps only sessions with click activity when with_clicks=true', async () => {
    const { api } = await setup();
    const all = await list(api);
    const clicked = await list(api, '?with_clicks=true');
    expect(clicked.meta.count).toBeGreaterThan(0);
    expect(clicked.meta.count).toBeLessThan(all.meta.count);
    // Reaching a cart step takes a click; sessions without one are left out.
    expect(clicked.data.every((r) => r.furthest_step >= 1)).toBe(true);
    expect((await list(api, '?with_clicks=false')).meta.count).toBe(all.meta.count);
  });

  it('scopes data to the key: each client sees its own history and its own new sessions', async () => {
    const { api, other } = await setup();
    const before = await list(api);
    const otherBefore = await list(other);
    expect(otherBefore.data[0]?.id).not.toBe(before.data[0]?.id);
    await api.createSession({ street1: '2 Pending Ave', zip: '80202', campaign_id: 'synthetic' });
    const after = await list(api);
    expect(after.meta.count).toBe(before.meta.count + 1);
    expect(after.data[0]?.campaign_id).toBe('synthetic');
    expect(after.data[0]?.furthest_step).toBe(0);
    expect((await list(other)).meta.count).toBe(otherBefore.meta.count);
  });

  it('ignores unrecognized parameters', async () => {
    const { api } = await setup();
    expect((await list(api, '?colour=blue')).meta.count).toBe((await list(api)).meta.count);
  });
});

describe('GET /analytics/sessions/{id}', () => {
  it('finds a session by UUID or by session token, with nested order and cart progression', async () => {
    const { api } = await setup();
    const token = String(
      (await api.createSession({ street1: '1 Instant Way', zip: '80202' })).headers[
        'session_token'
      ],
    );
    const byToken = analyticsDetailResponseSchema
      .strict()
      .parse(body(await api.get(`/analytics/sessions/${token}`)));
    expect(byToken.data.address.street1).toBe('1 Instant Way');
    const byId = analyticsDetailResponseSchema.parse(
      body(await api.get(`/analytics/sessions/${byToken.data.id}`)),
    );
    expect(byId.data).toEqual(byToken.data);

    // A seeded session that reached checkout has its steps and order.
    let ordered;
    for (let page = 1; page <= 3 && !ordered; page++) {
      ordered = (await list(api, `?page=${page}`)).data.find((r) => r.order_number !== null);
    }
    expect(ordered).toBeDefined();
    const detail = analyticsDetailResponseSchema.parse(
      body(await api.get(`/analytics/sessions/${ordered?.id}`)),
    );
    expect(detail.data.order.order_number).toBe(ordered?.order_number);
    expect(detail.data.cart_progression.map((s) => s.step_name)).toEqual([
      'plan_selection',
      'internet_addons',
      'customer_info',
    ]);
    expect(detail.data).not.toHaveProperty('order_number');
  });

  it('reports another campaign for a created session under an analytics_campaign fault', async () => {
    const { api } = await setup();
    const token = String(
      (
        await api.createSession({
          street1: '1 Instant Way',
          zip: '80202',
          campaign_id: 'acme-synthetic',
        })
      ).headers['session_token'],
    );
    const campaignOf = async (extra?: Record<string, string>) =>
      analyticsDetailResponseSchema.parse(
        body(await api.get(`/analytics/sessions/${token}`, extra)),
      ).data.campaign_id;
    expect(await campaignOf()).toBe('acme-synthetic');
    const fault = (campaignId: string | null) => ({
      'X-Isa-Sim-Fault': JSON.stringify({ kind: 'analytics_campaign', campaignId }),
    });
    expect(await campaignOf(fault('somebody-else'))).toBe('somebody-else');
    expect(await campaignOf(fault(null))).toBeNull();
    // The list's row says the same; seeded history keeps its own campaigns.
    const page = analyticsListResponseSchema.parse(
      body(await api.get('/analytics/sessions', fault('somebody-else'))),
    );
    expect(page.data[0]?.campaign_id).toBe('somebody-else');
    const seeded = page.data.slice(1).map((r) => r.campaign_id);
    expect(seeded).not.toContain('somebody-else');
  });

  it('answers 404 in the common envelope for an unknown session or one owned by another key', async () => {
    const { api, other } = await setup();
    const theirs = String(
      (await other.createSession({ street1: '1 Instant Way', zip: '80202' })).headers[
        'session_token'
      ],
    );
    for (const id of ['00000000-0000-4000-8000-000000000000', theirs, 'whatever']) {
      const res = await api.get(`/analytics/sessions/${id}`);
      expect(res.status, id).toBe(404);
      expect(errorEnvelopeSchema.parse(body(res)).request_id).toBeTruthy();
    }
  });
});

describe('analytics ingestion', () => {
  const tokenOf = async (api: ReturnType<typeof client>) =>
    String(
      (await api.createSession({ street1: '1 Instant Way', zip: '80202' })).headers[
        'session_token'
      ],
    );
  const visible = async (api: ReturnType<typeof client>, token: string) => {
    const status = (await api.get(`/analytics/sessions/${token}`)).status;
    const listed = (await list(api, '?token_ids[]=' + token)).meta.count === 1;
    // The detail and the list agree at every moment.
    expect(listed, token).toBe(status === 200);
    return status === 200;
  };

  it('shows a new session only after the ingest delay', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({ now: clock.now, analyticsIngestDelayMs: 30_000 });
    const api = client(sim.url);
    const token = await tokenOf(api);
    expect(await visible(api, token)).toBe(false);
    clock.advance(29_999);
    expect(await visible(api, token)).toBe(false);
    clock.advance(1);
    expect(await visible(api, token)).toBe(true);
  });

  it('holds back sessions created during an ingest_stall until the stall ends', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({ now: clock.now, analyticsIngestDelayMs: 1_000 });
    const api = client(sim.url);
    const before = await tokenOf(api);
    clock.advance(1_000);
    expect(await visible(api, before)).toBe(true);
    const stall = sim.faults.add({ environment: 'default', fault: { kind: 'ingest_stall' } });
    await api.get('/ping');
    clock.advance(1);
    const during = await tokenOf(api);
    clock.advance(10 * 60_000);
    // Stalled: what was ingested stays, nothing new arrives however long it waits.
    expect(await visible(api, before)).toBe(true);
    expect(await visible(api, during)).toBe(false);
    sim.faults.remove(stall);
    expect(await visible(api, during)).toBe(true);
  });

  it('stalls only the environment the rule names', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({ now: clock.now });
    sim.faults.add({ environment: 'production', fault: { kind: 'ingest_stall' } });
    const sandbox = client(`${sim.url}/env/sandbox`);
    const production = client(`${sim.url}/env/production`);
    // The stall begins when a request first sees it; sessions created after that are held back.
    await production.get('/ping');
    clock.advance(1);
    const inSandbox = await tokenOf(sandbox);
    const inProduction = await tokenOf(production);
    clock.advance(60_000);
    expect(await visible(sandbox, inSandbox)).toBe(true);
    expect(await visible(production, inProduction)).toBe(false);
  });
});
