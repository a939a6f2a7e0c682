import { describe, expect, it } from 'vitest';
import { errorEnvelopeSchema } from '../../src/api/schemas.js';
import {
  coverageResponseSchema,
  pingResponseSchema,
  serviceProvidersResponseSchema,
} from '../../src/simulator/schemas.js';
import { body, client, startTestSimulator, testClock } from './helpers.js';

describe('GET /ping', () => {
  it('answers {message, timestamp} with the current time', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({ now: clock.now });
    const b = pingResponseSchema.strict().parse(body(await client(sim.url).get('/ping')));
    expect(Date.parse(b.timestamp)).toBe(clock.now());
  });
});

describe('GET /service_providers', () => {
  it('orders by residential units, largest first, each supplemental brand right after its parent', async () => {
    const sim = await startTestSimulator();
    const { providers } = serviceProvidersResponseSchema.parse(
      body(await client(sim.url).get('/service_providers')),
    );
    expect(providers.length).toBeGreaterThanOrEqual(6);
    const parents = providers.filter((p) => p.type === 'fcc_provider');
    const units = parents.map((p) => p.total_residential_units);
    expect(units).toEqual([...units].sort((a, b) => b - a));
    providers.forEach((p, i) => {
      if (p.type !== 'supplemental_brand') return;
      // The brand follows its parent (or a sibling brand that follows the parent).
      const before = providers
        .slice(0, i)
        .reverse()
        .find((q) => q.type === 'fcc_provider');
      expect(before?.fcc_name).toBe(p.fcc_name);
      expect(p.total_residential_units).toBe(before?.total_residential_units);
    });
    expect(providers.some((p) => p.type === 'supplemental_brand')).toBe(true);
    expect(new Set(providers.map((p) => p.id)).size).toBe(providers.length);
  });

  it('includes providers that serve no address any more (inactive)', async () => {
    const sim = await startTestSimulator();
    const { providers } = serviceProvidersResponseSchema.parse(
      body(await client(sim.url).get('/service_providers')),
    );
    const coverage = coverageResponseSchema.parse(
      body(
        await client(sim.url).get(
          '/coverage?states[]=CO&states[]=NY&states[]=IL&states[]=CA&states[]=TX&states[]=WA&states[]=FL&states[]=GA&states[]=PA',
        ),
      ),
    );
    const covering = new Set(coverage.data.map((p) => p.provider_id));
    expect(providers.filter((p) => !covering.has(p.id)).length).toBeGreaterThan(0);
  });
});

describe('GET /coverage', () => {
  const coverage = async (query: string) => {
    const sim = await startTestSimulator();
    const res = await client(sim.url).get(`/coverage?${query}`);
    return { res, b: body(res) };
  };
  const ids = (b: Record<string, unknown>) =>
    coverageResponseSchema
      .parse(b)
      .data.map((p) => p.provider_id)
      .sort();

  it('needs at least one geographic parameter: 400 in the common envelope', async () => {
    for (const q of ['', 'page=1', 'state=CO']) {
      const { res, b } = await coverage(q);
      expect(res.status, q).toBe(400);
      expect(errorEnvelopeSchema.parse(b).request_status).toBe('warning');
    }
  });

  it('rejects malformed values with 400 naming the parameter', async () => {
    for (const q of [
      'counties[]=8031',
      'tracts[]=0803100110',
      'blocks[]=08031001100100',
      'states[]=ZZ',
      'states[]=11',
    ]) {
      const { res, b } = await coverage(q);
      expect(res.status, q).toBe(400);
      expect(Object.keys(errorEnvelopeSchema.parse(b).errors ?? {})).toHaveLength(1);
    }
  });

  it('accepts states as postal codes or FIPS codes alike', async () => {
    const postal = await coverage('states[]=CO');
    const fips = await coverage('states[]=08');
    expect(postal.res.status).toBe(200);
    expect(ids(postal.b).length).toBeGreaterThan(1);
    expect(ids(fips.b)).toEqual(ids(postal.b));
    expect(postal.b.data[0].matched_areas).toEqual(['CO']);
    expect(fips.b.data[0].matched_areas).toEqual(['08']);
  });

  it('combines values of one parameter with OR', async () => {
    const co = ids((await coverage('states[]=CO')).b);
    const ny = ids((await coverage('states[]=NY')).b);
    const both = await coverage('states[]=CO&states[]=NY');
    expect(ids(both.b)).toEqual([...new Set([...co, ...ny])].sort());
    expect(ids(both.b).length).toBeGreaterThan(Math.max(co.length, ny.length));
    const riverline = both.b.data.find((p: { provider_id: string }) => p.provider_id === '104518');
    expect(riverline.matched_areas.sort()).toEqual(['CO', 'NY']);
  });

  it('combines different parameters with AND', async () => {
    expect(ids((await coverage('states[]=CO&counties[]=36061')).b)).toEqual([]);
    const denver = ids((await coverage('counties[]=08031')).b);
    const coDenver = ids((await coverage('states[]=CO&counties[]=08031')).b);
    expect(coDenver).toEqual(denver);
    // A narrower tract drops providers that serve only other tracts of the county.
    const tract = ids((await coverage('counties[]=08031&tracts[]=08031003101')).b);
    expect(tract.length).toBeGreaterThan(0);
    expect(tract.length).toBeLessThan(denver.length);
  });

  it('matches census blocks (blocks[]) and reports the matched areas', async () => {
    const { res, b } = await coverage('blocks[]=080310011001000&blocks[]=999999999999999');
    expect(res.status).toBe(200);
    const parsed = coverageResponseSchema.parse(b);
    expect(parsed.data.length).toBeGreaterThan(0);
    for (const p of parsed.data) expect(p.matched_areas).toEqual(['080310011001000']);
    expect(parsed.request_status).toBe('ok');
    expect(parsed.message).toMatch(/blocks/);
    expect(parsed.meta.provider_count).toBe(parsed.data.length);
  });

  it('accepts the parameters without brackets too', async () => {
    expect(ids((await coverage('counties=08031')).b)).toEqual(
      ids((await coverage('counties[]=08031')).b),
    );
  });
});
