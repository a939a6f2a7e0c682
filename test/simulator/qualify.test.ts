import { describe, expect, it } from 'vitest';
import {
  offeringsEnvelopeSchema,
  sessionMetaSchema,
  sessionMetaShortSchema,
  addressValidationUnavailableBodySchema,
  type QualifyStatus,
} from '../../src/api/schemas.js';
import { body, client, startTestSimulator, testClock, type Json } from './helpers.js';

const DELAY = 1000;

async function setup() {
  const clock = testClock();
  const sim = await startTestSimulator({ now: clock.now, qualifyDelayMs: DELAY });
  const api = client(sim.url);
  const create = async (street1: string, extra: Json = {}) => {
    const res = await api.createSession({ street1, zip: '80202', ...extra });
    expect(res.status).toBe(201);
    return { res, body: body(res), token: String(res.headers['session_token']) };
  };
  const poll = async (token: string) => {
    const res = await api.get(`/sessions/${token}/services/internet`);
    expect(res.status).toBe(200);
    return offeringsEnvelopeSchema.parse(body(res));
  };
  return { clock, sim, api, create, poll };
}

/** The qualify status polled at each offset (ms after creation). */
async function walk(street1: string, offsets: number[]): Promise<QualifyStatus[]> {
  const { clock, create, poll } = await setup();
  const created = await create(street1);
  const seen: QualifyStatus[] = [created.body.qualify_status];
  let at = 0;
  for (const offset of offsets) {
    clock.advance(offset - at);
    at = offset;
    seen.push((await poll(created.token)).qualify_status ?? 'pending');
  }
  return seen;
}

describe('documented test addresses', () => {
  it('1 Instant Way: available in the creation response, short meta and checkout extras', async () => {
    const { create } = await setup();
    const { body: b } = await create('1 instant WAY'); // matched case-insensitively
    const env = offeringsEnvelopeSchema.parse(b);
    expect(env.qualify_status).toBe('available');
    expect(env.data.length).toBeGreaterThanOrEqual(2);
    expect(Object.keys(b.meta).sort()).toEqual([
      'responded_at',
      'service_data_set',
      'session_status',
      'session_token',
    ]);
    expect(sessionMetaShortSchema.safeParse(b.meta).success).toBe(true);
    expect(
      env.data.every(
        (o) => typeof o.security_token === 'string' && typeof o.buyflow_type === 'string',
      ),
    ).toBe(true);
  });

  it('2 Pending Ave: pending with empty data, then available with providers after the delay', async () => {
    const { clock, create, poll } = await setup();
    const created = await create('2 Pending Ave');
    expect(created.body.qualify_status).toBe('pending');
    expect(created.body.data).toEqual([]);
    expect(sessionMetaSchema.safeParse(created.body.meta).success).toBe(true);
    expect(created.body.meta.agent_status.internet).toBe('pending');
    clock.advance(DELAY - 1);
    expect((await poll(created.token)).qualify_status).toBe('pending');
    clock.advance(1);
    const done = await poll(created.token);
    expect(done.qualify_status).toBe('available');
    expect(done.data.length).toBeGreaterThan(0);
    expect(done.data.some((o) => o.product_catalog.length > 0)).toBe(true);
    expect(sessionMetaSchema.parse(done.meta).agent_status.internet).toBe('matched');
    // Polls never carry the creation-only fields.
    expect(
      done.data.every((o) => o.security_token === undefined && o.buyflow_type === undefined),
    ).toBe(true);
  });

  it('3 No Service Rd: pending, then no_service with empty data', async () => {
    expect(await walk('3 No Service Rd', [DELAY - 1, DELAY, DELAY * 10])).toEqual([
      'pending',
      'pending',
      'no_service',
      'no_service',
    ]);
  });

  it('4 Failed Blvd: pending, then failed', async () => {
    expect(await walk('4 Failed Blvd', [DELAY - 1, DELAY])).toEqual([
      'pending',
      'pending',
      'failed',
    ]);
  });

  it('5 Retry Ln: retry_later for the delay, pending for another, then available', async () => {
    expect(await walk('5 Retry Ln', [DELAY - 1, DELAY, 2 * DELAY - 1, 2 * DELAY])).toEqual([
      'retry_later',
      'retry_later',
      'pending',
      'pending',
      'available',
    ]);
  });

  it('6 Forever Pending Ct: pending forever', async () => {
    expect(await walk('6 Forever Pending Ct', [DELAY, 3_600_000])).toEqual([
      'pending',
      'pending',
      'pending',
    ]);
  });

  it('7 Validation Down Dr: 503 address_validation_unavailable with Retry-After: 30, no session', async () => {
    const { sim, api } = await setup();
    const res = await api.createSession({
      street1: '7 Validation Down Dr',
      city: 'Austin',
      state: 'TX',
    });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('30');
    expect(addressValidationUnavailableBodySchema.strict().parse(body(res))).toEqual({
      address_validation_unavailable: true,
    });
    expect(sim.state.sessions()).toEqual([]);
  });

  it('GET /sessions/{token} reports the same qualify progression', async () => {
    const { clock, api, create } = await setup();
    const { token } = await create('3 No Service Rd');
    expect(body(await api.get(`/sessions/${token}`)).qualify_status).toBe('pending');
    clock.advance(DELAY);
    const after = body(await api.get(`/sessions/${token}`));
    expect(after.qualify_status).toBe('no_service');
    expect(Date.parse(after.meta.updated_at)).toBeGreaterThan(Date.parse(after.meta.created_at));
  });
});

describe('ordinary addresses', () => {
  it('resolve deterministically from the address: the same outcome in two simulators', async () => {
    const outcomes: QualifyStatus[][] = [];
    for (let run = 0; run < 2; run++) {
      const { clock, create, poll } = await setup();
      const statuses: QualifyStatus[] = [];
      const tokens = [];
      for (let n = 0; n < 12; n++) tokens.push((await create(`${100 + n} Main St`)).token);
      clock.advance(DELAY * 3);
      for (const t of tokens) statuses.push((await poll(t)).qualify_status ?? 'pending');
      outcomes.push(statuses);
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    // Mostly available.
    expect(outcomes[0]?.filter((s) => s === 'available').length).toBeGreaterThanOrEqual(8);
  });

  it('answer available immediately on a second lookup of the same building within the window', async () => {
    const { clock, create } = await setup();
    const first = await create('123 Main St', { street2: 'Apt 1' });
    expect(first.body.qualify_status).toBe('pending');
    clock.advance(DELAY * 3);
    // Another unit of the same building: providers straight away, in the short form.
    const second = await create('123 main st', { street2: 'Apt 2' });
    expect(second.body.qualify_status).toBe('available');
    expect(second.body.data.length).toBeGreaterThan(0);
    expect(Object.keys(second.body.meta)).toHaveLength(4);
    // Long after, the building is looked up afresh.
    clock.advance(60 * 60_000);
    expect((await create('123 Main St')).body.qualify_status).toBe('pending');
  });

  it('join a lookup still in progress instead of answering before it', async () => {
    const { clock, create, poll } = await setup();
    await create('123 Main St');
    clock.advance(DELAY / 2);
    const second = await create('123 Main St');
    expect(second.body.qualify_status).toBe('pending');
    clock.advance(DELAY / 2);
    expect((await poll(second.token)).qualify_status).toBe('available');
  });

  it('name a stable numeric service_data_set and keep providers stable between polls', async () => {
    const { clock, create, poll } = await setup();
    const { token, body: b } = await create('2 Pending Ave');
    clock.advance(DELAY);
    const a = await poll(token);
    const again = await poll(token);
    expect(a.meta.service_data_set).toMatch(/^\d+$/);
    expect(a.meta.service_data_set).toBe(b.meta.service_data_set);
    expect(again.data).toEqual(a.data);
  });
});
