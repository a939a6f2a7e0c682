import { describe, expect, it } from 'vitest';
import { errorEnvelopeSchema } from '../../src/api/schemas.js';
import { body, client, rawRequest, startTestSimulator, testClock } from './helpers.js';

describe('rate limits', () => {
  it('answers 429 in the common envelope with Retry-After: 60 and no other rate-limit headers past the per-second limit', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({
      now: clock.now,
      rateLimit: { perSecond: 5, analyticsPerMinute: 100 },
    });
    const api = client(sim.url);
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await api.get('/ping')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const limited = await api.get('/ping');
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('60');
    expect(Object.keys(limited.headers).filter((h) => /ratelimit|rate-limit/i.test(h))).toEqual([]);
    expect(errorEnvelopeSchema.strict().parse(body(limited)).request_status).toBe('warning');
    // The window slides: a second later the client may send again.
    clock.advance(1000);
    expect((await api.get('/ping')).status).toBe(200);
  });

  it('counts every endpoint, unmatched routes and failed credentials included', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({
      now: clock.now,
      rateLimit: { perSecond: 3, analyticsPerMinute: 100 },
    });
    await rawRequest(`${sim.url}/nope`, { headers: { accept: 'application/json' } });
    await rawRequest(`${sim.url}/ping`, { headers: { accept: 'application/json' } }); // 401
    await client(sim.url).get('/service_providers');
    expect(
      (await client(sim.url).createSession({ street1: '1 Instant Way', zip: '80202' })).status,
    ).toBe(429);
  });

  it('limits analytics to its per-minute budget on top of the global limit', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({
      now: clock.now,
      rateLimit: { perSecond: 1000, analyticsPerMinute: 3 },
    });
    const api = client(sim.url);
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push(
        (await api.get(i % 2 ? '/analytics/sessions' : '/analytics/sessions?page=2')).status,
      );
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await api.get('/ping')).status).toBe(200);
    clock.advance(59_000);
    expect((await api.get('/analytics/sessions')).status).toBe(429);
    clock.advance(1_001);
    expect((await api.get('/analytics/sessions')).status).toBe(200);
  });

  it('keeps a separate budget per environment and never limits the admin API', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({
      now: clock.now,
      rateLimit: { perSecond: 2, analyticsPerMinute: 100 },
    });
    for (let i = 0; i < 2; i++) expect((await client(sim.url).get('/ping')).status).toBe(200);
    expect((await client(sim.url).get('/ping')).status).toBe(429);
    expect((await client(`${sim.url}/env/production`).get('/ping')).status).toBe(200);
    for (let i = 0; i < 5; i++)
      expect((await rawRequest(`${sim.url}/__sim/faults`)).status).toBe(200);
  });

  it('forgets the windows on POST /__sim/reset', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({
      now: clock.now,
      rateLimit: { perSecond: 1, analyticsPerMinute: 100 },
    });
    expect((await client(sim.url).get('/ping')).status).toBe(200);
    expect((await client(sim.url).get('/ping')).status).toBe(429);
    expect((await rawRequest(`${sim.url}/__sim/reset`, { method: 'POST' })).status).toBe(204);
    expect((await client(sim.url).get('/ping')).status).toBe(200);
  });
});
