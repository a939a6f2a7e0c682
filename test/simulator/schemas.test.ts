/**
 * Every response the simulator builds passes its schema from src/api/schemas.ts, with no field
 * the spec does not name (validateResponse's unknown fields), so a monitor tested against the
 * simulator sees exactly the documented shapes.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  addressValidationUnavailableBodySchema,
  errorEnvelopeSchema,
  offeringsEnvelopeSchema,
  PRICING_KEYS,
  sessionEnvelopeSchema,
  unsupportedMediaTypeBodySchema,
} from '../../src/api/schemas.js';
import {
  analyticsDetailResponseSchema,
  analyticsListResponseSchema,
  coverageResponseSchema,
  pingResponseSchema,
  serviceProvidersResponseSchema,
} from '../../src/simulator/schemas.js';
import { validateResponse } from '../../src/api/validate.js';
import {
  body,
  client,
  rawRequest,
  startTestSimulator,
  testClock,
  API_KEY,
  type RawResponse,
} from './helpers.js';

function expectConforms(schema: z.ZodType, res: RawResponse): void {
  const result = validateResponse(schema, res.json());
  expect(result.violations, res.text.slice(0, 300)).toEqual([]);
  expect(result.unknownFields).toEqual([]);
}

describe('responses conform to the API schemas', () => {
  it('session lifecycle: creation (both meta forms), get, poll, close', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({ now: clock.now, qualifyDelayMs: 10 });
    const api = client(sim.url);
    const instant = await api.createSession({ street1: '1 Instant Way', zip: '80202' });
    expectConforms(offeringsEnvelopeSchema, instant);
    const created = await api.createSession({
      street1: '2 Pending Ave',
      street2: 'Unit 9',
      city: 'Denver',
      zip: '80202',
      campaign_id: 'c',
    });
    expectConforms(offeringsEnvelopeSchema, created);
    const token = String(created.headers['session_token']);
    expectConforms(offeringsEnvelopeSchema, await api.get(`/sessions/${token}/services/internet`));
    clock.advance(10);
    const resolved = await api.get(`/sessions/${token}/services/internet`);
    expectConforms(offeringsEnvelopeSchema, resolved);
    expect(body(resolved).data.length).toBeGreaterThan(0);
    expectConforms(sessionEnvelopeSchema, await api.get(`/sessions/${token}`));
    expectConforms(sessionEnvelopeSchema, await api.delete(`/sessions/${token}`));
    for (const street1 of [
      '3 No Service Rd',
      '4 Failed Blvd',
      '5 Retry Ln',
      '6 Forever Pending Ct',
    ]) {
      expectConforms(offeringsEnvelopeSchema, await api.createSession({ street1, zip: '80202' }));
    }
  });

  it('offerings: every provider, every product, every pricing key as money; some empty catalogs', async () => {
    const sim = await startTestSimulator({ qualifyDelayMs: 0 });
    const api = client(sim.url);
    const providers = new Map<string, { catalog: number; technologies: string[] }>();
    let thirdTermAbsent = false;
    let thirdTermPresent = false;
    for (let n = 0; n < 30; n++) {
      const res = await api.createSession({ street1: `${n + 1} Oak St`, zip: '80202' });
      const token = String(res.headers['session_token']);
      const polled = offeringsEnvelopeSchema.parse(
        body(await api.get(`/sessions/${token}/services/internet`)),
      );
      for (const o of polled.data) {
        providers.set(o.provider_id, {
          catalog: o.product_catalog.length,
          technologies: o.offerings.map((t) => t.technology),
        });
        for (const product of o.product_catalog.flatMap((c) => c.products)) {
          for (const key of PRICING_KEYS.filter((k) => k !== 'third_term_discount')) {
            expect(product.pricing[key].currency).toBe('USD');
          }
          if (product.pricing.third_term_discount) thirdTermPresent = true;
          else thirdTermAbsent = true;
        }
      }
    }
    expect(providers.size).toBeGreaterThanOrEqual(4);
    expect([...providers.values()].some((p) => p.catalog === 0)).toBe(true);
    expect([...providers.values()].some((p) => p.catalog > 0)).toBe(true);
    const technologies = new Set([...providers.values()].flatMap((p) => p.technologies));
    expect(technologies).toContain('Cable');
    expect(technologies).toContain('Fiber');
    expect(thirdTermAbsent && thirdTermPresent).toBe(true);
  });

  it('reference and analytics endpoints', async () => {
    const sim = await startTestSimulator();
    const api = client(sim.url);
    expectConforms(pingResponseSchema, await api.get('/ping'));
    expectConforms(serviceProvidersResponseSchema, await api.get('/service_providers'));
    expectConforms(coverageResponseSchema, await api.get('/coverage?states[]=CO&counties[]=08031'));
    const list = await api.get('/analytics/sessions?page=2');
    expectConforms(analyticsListResponseSchema, list);
    const id = String(body(list).data[0].id);
    expectConforms(analyticsDetailResponseSchema, await api.get(`/analytics/sessions/${id}`));
  });

  it('error bodies', async () => {
    const sim = await startTestSimulator();
    const api = client(sim.url);
    expectConforms(
      errorEnvelopeSchema,
      await rawRequest(`${sim.url}/ping`, { headers: { accept: 'application/json' } }),
    );
    expectConforms(errorEnvelopeSchema, await api.createSession({ street1: 'x' }));
    expectConforms(errorEnvelopeSchema, await api.get('/coverage'));
    expectConforms(errorEnvelopeSchema, await api.get('/sessions/nope'));
    expectConforms(errorEnvelopeSchema, await api.get('/analytics/sessions?token_ids[]=x'));
    expectConforms(
      addressValidationUnavailableBodySchema,
      await api.createSession({ street1: '7 Validation Down Dr', zip: '80202' }),
    );
    expectConforms(
      unsupportedMediaTypeBodySchema,
      await rawRequest(`${sim.url}/sessions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${API_KEY}`,
          accept: 'application/json',
          'content-type': 'text/plain',
        },
        body: 'x',
      }),
    );
  });
});
