import { describe, expect, it } from 'vitest';
import {
  sessionEnvelopeSchema,
  offeringsEnvelopeSchema,
  errorEnvelopeSchema,
} from '../../src/api/schemas.js';
import { API_KEY, body, client, rawRequest, startTestSimulator } from './helpers.js';

const ADDRESS = { street1: '2 Pending Ave', zip: '80202' };

describe('POST /sessions field rules', () => {
  it('rejects unpermitted fields with 400 and names them', async () => {
    const sim = await startTestSimulator();
    const res = await client(sim.url).createSession({ ...ADDRESS, country: 'US', foo: 1 });
    expect(res.status).toBe(400);
    const b = body(res);
    expect(errorEnvelopeSchema.parse(b).request_status).toBe('warning');
    expect(b.message).toContain('country');
    expect(b.message).toContain('foo');
  });

  it.each([
    ['absent', { zip: '80202' }],
    ['null', { street1: null, zip: '80202' }],
    ['empty', { street1: '', zip: '80202' }],
  ])('answers 400 when street1 is %s', async (_label, payload) => {
    const sim = await startTestSimulator();
    const res = await client(sim.url).createSession(payload);
    expect(res.status).toBe(400);
    expect(body(res).message).toMatch(/street1/);
  });

  it('answers 400 for a body that is not a JSON object, and for broken JSON', async () => {
    const sim = await startTestSimulator();
    expect((await client(sim.url).createSession([ADDRESS])).status).toBe(400);
    const broken = await rawRequest(`${sim.url}/sessions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${API_KEY}`,
        accept: 'application/json',
        'content-type': 'application/json',
      },
      body: '{"street1": ',
    });
    expect(broken.status).toBe(400);
    expect(errorEnvelopeSchema.safeParse(body(broken)).success).toBe(true);
  });

  it.each([
    ['street1 only', { street1: '10 Main St' }, 'base'],
    ['street1+city', { street1: '10 Main St', city: 'Denver' }, 'base'],
    ['street1+state', { street1: '10 Main St', state: 'CO' }, 'base'],
    ['lowercase state', { street1: '10 Main St', city: 'Denver', state: 'co' }, 'state'],
    ['DC is excluded', { street1: '10 Main St', city: 'Washington', state: 'DC' }, 'state'],
    ['short zip', { street1: '10 Main St', zip: '8020' }, 'zip'],
    ['zip+3', { street1: '10 Main St', zip: '80202-123' }, 'zip'],
    ['street1 over 100', { street1: 'x'.repeat(101), zip: '80202' }, 'street1'],
    ['street2 over 50', { ...ADDRESS, street2: 'x'.repeat(51) }, 'street2'],
    ['empty street2', { ...ADDRESS, street2: '' }, 'street2'],
    ['city over 50', { street1: '10 Main St', city: 'x'.repeat(51), zip: '80202' }, 'city'],
    ['campaign_id over 100', { ...ADDRESS, campaign_id: 'c'.repeat(101) }, 'campaign_id'],
    ['latitude not a number', { ...ADDRESS, latitude: '39.7' }, 'latitude'],
  ])('answers 422 with errors.%s', async (_label, payload, field) => {
    const sim = await startTestSimulator();
    const res = await client(sim.url).createSession(payload);
    expect(res.status).toBe(422);
    const b = errorEnvelopeSchema.parse(body(res));
    expect(Object.keys(b.errors ?? {})).toContain(field);
    expect(b.errors?.[field]?.length).toBeGreaterThan(0);
  });

  it.each([
    ['street1+zip', { street1: '10 Main St', zip: '80202' }],
    ['street1+city+state', { street1: '10 Main St', city: 'Denver', state: 'CO' }],
    ['street1+city+zip', { street1: '10 Main St', city: 'Denver', zip: '80202-1234' }],
    [
      'every field',
      {
        street1: '10 Main St',
        street2: 'Apt 4',
        city: 'Denver',
        state: 'CO',
        zip: '80202',
        latitude: 39.75,
        longitude: -104.99,
        campaign_id: 'spring',
      },
    ],
  ])('accepts the combination %s with 201', async (_label, payload) => {
    const sim = await startTestSimulator();
    const res = await client(sim.url).createSession(payload);
    expect(res.status).toBe(201);
  });

  it('answers 201 with the session_token header equal to meta.session_token and normalized params', async () => {
    const sim = await startTestSimulator();
    const res = await client(sim.url).createSession({
      street1: '  10   Main St ',
      street2: 'Apt 4',
      zip: '80202',
      latitude: 39.7512,
      longitude: -104.9963,
      campaign_id: 'spring',
    });
    expect(res.status).toBe(201);
    const b = offeringsEnvelopeSchema.parse(body(res));
    expect(res.headers['session_token']).toBe(b.meta.session_token);
    expect(b.meta.session_status).toBe('open');
    expect('session_params' in b.meta).toBe(true);
    if (!('session_params' in b.meta)) return;
    expect(b.meta.session_params).toEqual({
      street1: '10 Main St',
      street2: 'Apt 4',
      city: 'Denver',
      state: 'CO',
      zip: '80202',
      latitude: '39.751200',
      longitude: '-104.996300',
      campaign_id: 'spring',
    });
    expect(b.meta.mdu).toBe(true);
    expect(b.meta.service_address).toBe('10 Main St, Apt 4, Denver, CO 80202');
    expect(b.meta.agent_status.geocoding).toBe('matched');
  });

  it('fills in the state from the ZIP and the ZIP from the state', async () => {
    const sim = await startTestSimulator();
    const fromZip = body(
      await client(sim.url).createSession({ street1: '9 Elm St', zip: '10001' }),
    );
    expect(fromZip.meta.session_params.state).toBe('NY');
    const fromState = body(
      await client(sim.url).createSession({ street1: '9 Elm St', city: 'Austin', state: 'TX' }),
    );
    expect(fromState.meta.session_params.zip).toMatch(/^\d{5}$/);
    expect(fromState.meta.session_params.city).toBe('Austin');
  });
});

describe('session state machine', () => {
  it('goes open → closed, then answers 410 to every operation on the session', async () => {
    const sim = await startTestSimulator();
    const api = client(sim.url);
    const created = await api.createSession(ADDRESS);
    const token = String(created.headers['session_token']);

    const got = await api.get(`/sessions/${token}`);
    expect(got.status).toBe(200);
    const g = sessionEnvelopeSchema.parse(body(got));
    expect(g.data).toEqual({ session_token: token });
    expect(g.meta.session_status).toBe('open');
    expect(got.headers['session_token']).toBe(token);
    expect(sim.state.openSessions().map((s) => s.token)).toEqual([token]);

    const closed = await api.delete(`/sessions/${token}`);
    expect(closed.status).toBe(200);
    const c = sessionEnvelopeSchema.parse(body(closed));
    expect(c.meta.session_status).toBe('closed');
    expect(c.message).toMatch(/closed/i);
    expect(closed.headers['session_token']).toBe(token);
    expect(sim.state.openSessions()).toEqual([]);

    for (const res of [
      await api.get(`/sessions/${token}`),
      await api.get(`/sessions/${token}/services/internet`),
      await api.delete(`/sessions/${token}`),
    ]) {
      expect(res.status).toBe(410);
      expect(errorEnvelopeSchema.parse(body(res)).request_status).toBe('warning');
    }
  });

  it('answers 400 for a malformed token, an unknown token and a token of another environment', async () => {
    const sim = await startTestSimulator();
    const api = client(sim.url);
    const token = String((await api.createSession(ADDRESS)).headers['session_token']);
    for (const path of [
      '/sessions/not-a-token',
      '/sessions/AAAAAAAAAAAAAAAAAAAAAAAA',
      '/sessions/AAAAAAAAAAAAAAAAAAAAAAAA/services/internet',
      `/env/production/sessions/${token}`,
    ]) {
      const res = await api.get(path);
      expect(res.status, path).toBe(400);
      expect(errorEnvelopeSchema.safeParse(body(res)).success).toBe(true);
    }
    expect((await api.delete('/sessions/AAAAAAAAAAAAAAAAAAAAAAAA')).status).toBe(400);
  });

  it('keeps environments apart: sessions live in the environment that created them', async () => {
    const sim = await startTestSimulator();
    const prod = client(`${sim.url}/env/production`);
    const token = String((await prod.createSession(ADDRESS)).headers['session_token']);
    expect((await prod.get(`/sessions/${token}`)).status).toBe(200);
    expect((await client(sim.url).get(`/sessions/${token}`)).status).toBe(400);
    expect(sim.state.openSessions('production')).toHaveLength(1);
    expect(sim.state.openSessions('default')).toHaveLength(0);
  });

  it('lets any accepted key read a session (session tokens are bearer-like)', async () => {
    const sim = await startTestSimulator();
    const token = String((await client(sim.url).createSession(ADDRESS)).headers['session_token']);
    expect((await client(sim.url, 'test-key-2').get(`/sessions/${token}`)).status).toBe(200);
  });
});
