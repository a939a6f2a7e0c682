/** Every fault kind, injected per request through the X-Isa-Sim-Fault header. */
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import {
  addressValidationUnavailableBodySchema,
  errorEnvelopeSchema,
  offeringsEnvelopeSchema,
  sessionEnvelopeSchema,
  unsupportedMediaTypeBodySchema,
} from '../../src/api/schemas.js';
import { FAULT_STATUSES, FaultController, type Fault } from '../../src/simulator/index.js';
import { eventually } from '../support/cli.js';
import { body, client, rawRequest, startTestSimulator, testClock, apiHeaders } from './helpers.js';

const fault = (f: Fault | Fault[]) => ({ 'x-isa-sim-fault': JSON.stringify(f) });
const ADDRESS = { street1: '2 Pending Ave', zip: '80202' };

describe('status faults', () => {
  it.each(FAULT_STATUSES.filter((s) => ![415, 429, 502, 503, 504].includes(s)))(
    'status %i answers the common envelope (warning below 500, error from 500)',
    async (status) => {
      const sim = await startTestSimulator();
      const res = await client(sim.url).get('/ping', fault({ kind: 'status', status }));
      expect(res.status).toBe(status);
      const b = errorEnvelopeSchema.parse(body(res));
      expect(b.request_status).toBe(status >= 500 ? 'error' : 'warning');
      if (status === 422) expect(b.errors?.base?.length).toBeGreaterThan(0);
    },
  );

  it('status 415 answers the 415 body', async () => {
    const sim = await startTestSimulator();
    const res = await client(sim.url).get('/ping', fault({ kind: 'status', status: 415 }));
    expect(res.status).toBe(415);
    expect(unsupportedMediaTypeBodySchema.parse(body(res)).status).toBe(415);
  });

  it('status 429 answers with Retry-After: 60, or the given retryAfterSeconds', async () => {
    const sim = await startTestSimulator();
    const plain = await client(sim.url).get('/ping', fault({ kind: 'status', status: 429 }));
    expect(plain.status).toBe(429);
    expect(plain.headers['retry-after']).toBe('60');
    const custom = await client(sim.url).get(
      '/ping',
      fault({ kind: 'status', status: 429, retryAfterSeconds: 5 }),
    );
    expect(custom.headers['retry-after']).toBe('5');
  });

  it('status 503 on session creation is address_validation_unavailable with Retry-After; elsewhere the envelope', async () => {
    const sim = await startTestSimulator();
    const create = await client(sim.url).createSession(
      ADDRESS,
      fault({ kind: 'status', status: 503, retryAfterSeconds: 12 }),
    );
    expect(create.status).toBe(503);
    expect(create.headers['retry-after']).toBe('12');
    expect(addressValidationUnavailableBodySchema.strict().safeParse(body(create)).success).toBe(
      true,
    );
    expect(sim.state.sessions()).toEqual([]);
    const ping = await client(sim.url).get('/ping', fault({ kind: 'status', status: 503 }));
    expect(errorEnvelopeSchema.parse(body(ping)).request_status).toBe('error');
  });

  it.each([502, 504] as const)('status %i answers a gateway HTML page', async (status) => {
    const sim = await startTestSimulator();
    const res = await client(sim.url).get('/ping', fault({ kind: 'status', status }));
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain(String(status));
  });

  it('runs before authentication, like a failing load balancer', async () => {
    const sim = await startTestSimulator();
    const res = await rawRequest(`${sim.url}/ping`, {
      headers: fault({ kind: 'status', status: 500 }),
    });
    expect(res.status).toBe(500);
  });
});

describe('latency, hang, reset, malformed, html', () => {
  it('latency ms delays the answer and combines with a status', async () => {
    const sim = await startTestSimulator();
    const res = await client(sim.url).get(
      '/ping',
      fault([
        { kind: 'latency', ms: 120 },
        { kind: 'status', status: 500 },
      ]),
    );
    expect(res.status).toBe(500);
    expect(res.elapsedMs).toBeGreaterThanOrEqual(115);
  });

  it('latency distribution draws within [min, max]', () => {
    // The draw itself, with the dice fixed: a measured duration has no upper bound on a busy
    // machine, so the upper end is proven here and the wait below only from beneath.
    const latencyWith = (roll: number) =>
      new FaultController({ now: () => 0, random: () => roll }).resolve({
        environment: 'default',
        endpoint: 'ping',
        headerFaults: [{ kind: 'latency', distribution: { min: 60, max: 90 } }],
      }).latencyMs;
    expect(latencyWith(0)).toBe(60);
    expect(latencyWith(0.5)).toBe(75);
    expect(latencyWith(0.999_999)).toBeGreaterThan(89.99);
    expect(latencyWith(0.999_999)).toBeLessThan(90);
  });

  it('a latency distribution delays the answer by at least its min', async () => {
    const sim = await startTestSimulator();
    for (let i = 0; i < 3; i++) {
      const res = await client(sim.url).get(
        '/ping',
        fault({ kind: 'latency', distribution: { min: 60, max: 90 } }),
      );
      expect(res.status).toBe(200);
      const ms = Number(/dur=([\d.]+)/.exec(String(res.headers['server-timing']))?.[1]);
      expect(ms).toBeGreaterThanOrEqual(59);
    }
  });

  it('hang never answers until the client gives up', async () => {
    const sim = await startTestSimulator();
    const started = performance.now();
    const res = rawRequest(`${sim.url}/ping`, {
      headers: { ...apiHeaders(), ...fault({ kind: 'hang' }) },
      timeoutMs: 300,
    });
    await expect(res).rejects.toMatchObject({ code: 'CLIENT_TIMEOUT' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('close() ends the server while requests hang, waiting neither for them nor for a timer', async () => {
    const lines: string[] = [];
    const sim = await startTestSimulator({
      logger: pino({}, { write: (line: string) => void lines.push(line) }),
    });
    const hanging = [1, 2, 3].map(() =>
      rawRequest(`${sim.url}/ping`, {
        headers: { ...apiHeaders(), ...fault({ kind: 'hang' }) },
      }).then(
        () => 'answered',
        (err: NodeJS.ErrnoException) => err.code,
      ),
    );
    // Every request is held by its fault before the close (the simulator logs each as it does).
    await eventually(
      () => lines.filter((line) => line.includes('injecting faults')).length === 3,
      10_000,
      'three hanging requests',
    );
    // "Promptly" by event order: closed within turns of the event loop (sockets close on I/O
    // callbacks) while the timers are frozen, so neither a wait for the requests nor a grace
    // timer could have ended it.
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval'] });
    let closed = false;
    const closing = sim.close().then(() => void (closed = true));
    let closedWithoutTimers = false;
    try {
      for (let turn = 0; turn < 1_000 && !closed; turn += 1) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      closedWithoutTimers = closed;
    } finally {
      // A close that waits on a timer still ends, so a failure here does not hang the cleanup.
      vi.runOnlyPendingTimers();
      vi.useRealTimers();
    }
    await closing;
    expect(closedWithoutTimers).toBe(true);
    expect(await Promise.all(hanging)).toEqual(['ECONNRESET', 'ECONNRESET', 'ECONNRESET']);
  });

  it('reset destroys the socket', async () => {
    const sim = await startTestSimulator();
    await expect(client(sim.url).get('/ping', fault({ kind: 'reset' }))).rejects.toMatchObject({
      code: 'ECONNRESET',
    });
  });

  it('malformed answers 200 with a body that is not valid JSON', async () => {
    const sim = await startTestSimulator();
    const res = await client(sim.url).get('/ping', fault({ kind: 'malformed' }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(() => JSON.parse(res.text)).toThrow();
  });

  it('malformed answers a session creation with 201, the status a client reads the body on', async () => {
    const sim = await startTestSimulator();
    const res = await client(sim.url).post(
      '/sessions',
      { street1: '1 Instant Way', zip: '10001', campaign_id: 'test' },
      fault({ kind: 'malformed' }),
    );
    expect(res.status).toBe(201);
    expect(() => JSON.parse(res.text)).toThrow();
  });

  it('html answers 200 with an HTML page', async () => {
    const sim = await startTestSimulator();
    const res = await client(sim.url).get('/ping', fault({ kind: 'html' }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toMatch(/<html>/);
  });

  it('an invalid fault header is a 400 that names the problem', async () => {
    const sim = await startTestSimulator();
    for (const header of [
      '{not json',
      '{"kind":"explode"}',
      '{"kind":"status","status":418}',
      '{"kind":"latency"}',
    ]) {
      const res = await client(sim.url).get('/ping', { 'x-isa-sim-fault': header });
      expect(res.status, header).toBe(400);
      expect(errorEnvelopeSchema.parse(body(res)).message).toMatch(/X-Isa-Sim-Fault/);
    }
  });
});

describe('behaviour faults', () => {
  it('qualify at creation forces the creation status and the session keeps it', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({ now: clock.now, qualifyDelayMs: 100 });
    const api = client(sim.url);
    const created = await api.createSession(
      { street1: '1 Instant Way', zip: '80202' },
      fault({ kind: 'qualify', status: 'pending' }),
    );
    expect(body(created).qualify_status).toBe('pending');
    expect(body(created).data).toEqual([]);
    clock.advance(3_600_000);
    const token = String(created.headers['session_token']);
    expect(body(await api.get(`/sessions/${token}/services/internet`)).qualify_status).toBe(
      'pending',
    );

    for (const status of ['no_service', 'failed', 'retry_later', 'available'] as const) {
      const res = await api.createSession(
        { street1: '6 Forever Pending Ct', zip: '80202' },
        fault({ kind: 'qualify', status }),
      );
      const b = offeringsEnvelopeSchema.parse(body(res));
      expect(b.qualify_status).toBe(status);
      expect(b.data.length > 0).toBe(status === 'available');
    }
  });

  it('qualify on a poll changes that one answer only', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({ now: clock.now, qualifyDelayMs: 100 });
    const api = client(sim.url);
    const token = String(
      (await api.createSession({ street1: '4 Failed Blvd', zip: '80202' })).headers[
        'session_token'
      ],
    );
    clock.advance(100);
    const forced = await api.get(
      `/sessions/${token}/services/internet`,
      fault({ kind: 'qualify', status: 'retry_later' }),
    );
    expect(body(forced).qualify_status).toBe('retry_later');
    expect(body(await api.get(`/sessions/${token}/services/internet`)).qualify_status).toBe(
      'failed',
    );
  });

  it('not_gone makes a closed session answer 200 instead of 410', async () => {
    const sim = await startTestSimulator();
    const api = client(sim.url);
    const token = String((await api.createSession(ADDRESS)).headers['session_token']);
    await api.delete(`/sessions/${token}`);
    const res = await api.get(`/sessions/${token}`, fault({ kind: 'not_gone' }));
    expect(res.status).toBe(200);
    expect(sessionEnvelopeSchema.parse(body(res)).meta.session_status).toBe('closed');
    expect(
      (await api.get(`/sessions/${token}/services/internet`, fault({ kind: 'not_gone' }))).status,
    ).toBe(200);
    expect((await api.delete(`/sessions/${token}`, fault({ kind: 'not_gone' }))).status).toBe(200);
    expect((await api.get(`/sessions/${token}`)).status).toBe(410);
  });

  it('not_gone leaves open sessions alone', async () => {
    const sim = await startTestSimulator();
    const api = client(sim.url);
    const token = String((await api.createSession(ADDRESS)).headers['session_token']);
    expect(
      body(await api.get(`/sessions/${token}`, fault({ kind: 'not_gone' }))).meta.session_status,
    ).toBe('open');
  });

  it('close_fail fails the DELETE (500 by default, or the given status) and the session stays open', async () => {
    const sim = await startTestSimulator();
    const api = client(sim.url);
    const token = String((await api.createSession(ADDRESS)).headers['session_token']);
    const failed = await api.delete(`/sessions/${token}`, fault({ kind: 'close_fail' }));
    expect(failed.status).toBe(500);
    expect(errorEnvelopeSchema.parse(body(failed)).request_status).toBe('error');
    const other = await api.delete(
      `/sessions/${token}`,
      fault({ kind: 'close_fail', status: 503 }),
    );
    expect(other.status).toBe(503);
    expect(sim.state.openSessions().map((s) => s.token)).toEqual([token]);
    expect(body(await api.get(`/sessions/${token}`)).meta.session_status).toBe('open');
    expect((await api.delete(`/sessions/${token}`)).status).toBe(200);
    expect(sim.state.openSessions()).toEqual([]);
  });
});
