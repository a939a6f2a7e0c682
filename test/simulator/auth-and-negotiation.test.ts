import { describe, expect, it } from 'vitest';
import { errorEnvelopeSchema, unsupportedMediaTypeBodySchema } from '../../src/api/schemas.js';
import { pingResponseSchema } from '../../src/simulator/schemas.js';
import { API_KEY, OTHER_KEY, body, rawRequest, startTestSimulator } from './helpers.js';

describe('authentication', () => {
  it.each([
    ['no Authorization header', {}],
    ['an unknown key', { authorization: 'Bearer nope' }],
    ['a malformed credential', { authorization: `Token ${API_KEY}` }],
    ['an empty bearer', { authorization: 'Bearer ' }],
  ])('answers 401 in the common envelope for %s', async (_label, headers) => {
    const sim = await startTestSimulator();
    for (const path of [
      '/ping',
      '/service_providers',
      '/analytics/sessions',
      '/env/production/ping',
    ]) {
      const res = await rawRequest(`${sim.url}${path}`, {
        headers: { accept: 'application/json', ...headers },
      });
      expect(res.status, path).toBe(401);
      const b = errorEnvelopeSchema.strict().parse(body(res));
      expect(b.request_status).toBe('warning');
      expect(res.headers['x-request-id']).toBe(b.request_id);
    }
  });

  it('accepts every configured key', async () => {
    const sim = await startTestSimulator();
    for (const key of [API_KEY, OTHER_KEY]) {
      const res = await rawRequest(`${sim.url}/ping`, {
        headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
      });
      expect(res.status).toBe(200);
      expect(pingResponseSchema.strict().safeParse(body(res)).success).toBe(true);
    }
  });
});

describe('content types', () => {
  const auth = { authorization: `Bearer ${API_KEY}`, accept: 'application/json' };

  it.each([
    ['text/plain', 'text/plain'],
    ['form encoding', 'application/x-www-form-urlencoded'],
    ['no Content-Type', undefined],
  ])(
    'answers 415 {error, message, status} to session creation sent as %s',
    async (_label, contentType) => {
      const sim = await startTestSimulator();
      const res = await rawRequest(`${sim.url}/sessions`, {
        method: 'POST',
        headers: { ...auth, ...(contentType ? { 'content-type': contentType } : {}) },
        body: 'street1=1+Main+St&zip=80202',
      });
      expect(res.status).toBe(415);
      expect(unsupportedMediaTypeBodySchema.strict().parse(body(res)).status).toBe(415);
      expect(sim.state.sessions()).toEqual([]);
    },
  );

  it('accepts application/json with a charset', async () => {
    const sim = await startTestSimulator();
    const res = await rawRequest(`${sim.url}/sessions`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ street1: '2 Pending Ave', zip: '80202' }),
    });
    expect(res.status).toBe(201);
  });

  it('answers 415 to any request declaring a non-JSON body type', async () => {
    const sim = await startTestSimulator();
    const res = await rawRequest(`${sim.url}/ping`, {
      headers: { ...auth, 'content-type': 'text/xml' },
    });
    expect(res.status).toBe(415);
    expect(body(res).status).toBe(415);
  });

  it('answers 406 when the client accepts no JSON, and 200 to wildcards', async () => {
    const sim = await startTestSimulator();
    const html = await rawRequest(`${sim.url}/ping`, {
      headers: { authorization: `Bearer ${API_KEY}`, accept: 'text/html' },
    });
    expect(html.status).toBe(406);
    expect(errorEnvelopeSchema.safeParse(body(html)).success).toBe(true);
    for (const accept of ['*/*', 'application/*', undefined]) {
      const res = await rawRequest(`${sim.url}/ping`, {
        headers: { authorization: `Bearer ${API_KEY}`, ...(accept ? { accept } : {}) },
      });
      expect(res.status, String(accept)).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
  });
});

describe('unmatched routes (framework default, before any controller)', () => {
  it('answer JSON 404 with Accept: application/json, without needing a credential', async () => {
    const sim = await startTestSimulator();
    for (const path of ['/nope', '/env/production/nope', '/sessions', '/sessions/x/services/tv']) {
      const res = await rawRequest(`${sim.url}${path}`, {
        headers: { accept: 'application/json' },
      });
      expect(res.status, path).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(body(res)).toEqual({ status: 404, error: 'Not Found' });
    }
  });

  it('answer an HTML page with a wildcard or missing Accept', async () => {
    const sim = await startTestSimulator();
    const variants: Array<Record<string, string>> = [
      { accept: '*/*' },
      {},
      { accept: 'text/html,*/*;q=0.8' },
    ];
    for (const headers of variants) {
      const res = await rawRequest(`${sim.url}/no/such/route`, { headers });
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toMatch(/<html>/);
      expect(() => JSON.parse(res.text)).toThrow();
    }
  });

  it('treat unsupported methods on known paths as unmatched', async () => {
    const sim = await startTestSimulator();
    const res = await rawRequest(`${sim.url}/ping`, {
      method: 'PUT',
      headers: { accept: 'application/json' },
    });
    expect(res.status).toBe(404);
  });
});

describe('environments', () => {
  it('serve the same API at the root and under /env/<name>/', async () => {
    const sim = await startTestSimulator();
    for (const base of [sim.url, `${sim.url}/env/production`, `${sim.url}/env/sandbox`]) {
      const res = await rawRequest(`${base}/ping`, {
        headers: { authorization: `Bearer ${API_KEY}`, accept: 'application/json' },
      });
      expect(res.status, base).toBe(200);
      expect(pingResponseSchema.parse(body(res)).message).toBeTruthy();
    }
  });

  it('name a different service_data_set per environment, stable for each', async () => {
    const sim = await startTestSimulator();
    const sets = [];
    for (const base of [
      `${sim.url}/env/production`,
      `${sim.url}/env/sandbox`,
      `${sim.url}/env/production`,
    ]) {
      const res = await rawRequest(`${base}/sessions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${API_KEY}`,
          accept: 'application/json',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ street1: '1 Instant Way', zip: '80202' }),
      });
      sets.push(body(res).meta.service_data_set);
    }
    expect(sets[0]).toBe(sets[2]);
    expect(sets[0]).not.toBe(sets[1]);
  });
});
