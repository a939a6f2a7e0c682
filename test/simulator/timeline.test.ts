/** Scripted fault timelines: switching over (injected) time, environments, repetition. */
import { describe, expect, it } from 'vitest';
import {
  createSimulator,
  DEMO_TIMELINE,
  DEMO_TIMELINE_PERIOD_MS,
  FaultController,
  type TimelineEntry,
} from '../../src/simulator/index.js';
import { body, client, rawRequest, startTestSimulator, testClock } from './helpers.js';

const status500 = { fault: { kind: 'status', status: 500 } } as const;
const status503 = { fault: { kind: 'status', status: 503 } } as const;

describe('timeline', () => {
  it('replaces the faults of an environment at each entry, over the injected clock', async () => {
    const clock = testClock();
    const timeline: TimelineEntry[] = [
      { at: '10s', environment: 'production', faults: [status500] },
      { at: '20s', environment: 'production', faults: [status503] },
      { at: '30s', environment: 'production', faults: [] },
    ];
    const sim = await startTestSimulator({ now: clock.now, timeline });
    const prod = client(`${sim.url}/env/production`);
    const sandbox = client(`${sim.url}/env/sandbox`);
    const seen = [];
    for (const t of [0, 10_000, 15_000, 20_000, 30_000, 99_000]) {
      clock.set(Date.parse('2025-06-02T12:00:00.000Z') + t);
      seen.push((await prod.get('/ping')).status);
      expect((await sandbox.get('/ping')).status).toBe(200);
    }
    expect(seen).toEqual([200, 500, 500, 503, 200, 200]);
  });

  it('applies an entry without environment to every environment, the root included', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({
      now: clock.now,
      timeline: [{ at: 0, faults: [status500] }],
    });
    expect((await client(sim.url).get('/ping')).status).toBe(500);
    expect((await client(`${sim.url}/env/x`).get('/ping')).status).toBe(500);
  });

  it('repeats from a `repeat: true` entry, continuing the last state before the first entry', async () => {
    const clock = testClock();
    const start = clock.now();
    const sim = await startTestSimulator({
      now: clock.now,
      timeline: [
        { at: '1m', faults: [status500] },
        { at: '2m', faults: [status503] },
        { at: '3m', repeat: true },
      ],
    });
    const at = async (ms: number) => {
      clock.set(start + ms);
      return (await client(sim.url).get('/ping')).status;
    };
    expect(await at(30_000)).toBe(200); // first cycle, before any entry
    expect(await at(90_000)).toBe(500);
    expect(await at(150_000)).toBe(503);
    expect(await at(180_000 + 30_000)).toBe(503); // second cycle, before its first entry
    expect(await at(180_000 + 90_000)).toBe(500);
  });

  it('gives each activation of an entry its own count', async () => {
    const clock = testClock();
    const start = clock.now();
    const sim = await startTestSimulator({
      now: clock.now,
      timeline: [
        { at: 0, faults: [{ count: 1, fault: { kind: 'status', status: 429 } }] },
        { at: '1m', repeat: true },
      ],
    });
    const api = client(sim.url);
    expect([(await api.get('/ping')).status, (await api.get('/ping')).status]).toEqual([429, 200]);
    clock.set(start + 60_000);
    expect([(await api.get('/ping')).status, (await api.get('/ping')).status]).toEqual([429, 200]);
  });

  it('combines timeline faults with rules and header faults', async () => {
    const clock = testClock();
    const sim = await startTestSimulator({
      now: clock.now,
      timeline: [{ at: 0, faults: [status503] }],
    });
    sim.faults.add({ fault: { kind: 'status', status: 500 } });
    // Rules come before the timeline, the header before both.
    expect((await client(sim.url).get('/ping')).status).toBe(500);
    expect(
      (await client(sim.url).get('/ping', { 'x-isa-sim-fault': '{"kind":"status","status":404}' }))
        .status,
    ).toBe(404);
    sim.faults.clear();
    expect((await client(sim.url).get('/ping')).status).toBe(503);
  });

  it('can be inspected, paused, resumed and restarted through the admin API', async () => {
    const clock = testClock();
    const start = clock.now();
    const sim = await startTestSimulator({
      now: clock.now,
      timeline: [
        { at: 0, environment: 'production', faults: [] },
        { at: '1m', environment: 'production', faults: [status500] },
      ],
    });
    clock.set(start + 61_000);
    const described = body(await rawRequest(`${sim.url}/__sim/faults`));
    expect(described.timeline.elapsedMs).toBe(61_000);
    expect(described.timeline.active.production).toEqual([status500]);
    const prod = client(`${sim.url}/env/production`);
    expect((await prod.get('/ping')).status).toBe(500);

    const control = (payload: unknown) =>
      rawRequest(`${sim.url}/__sim/timeline`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(payload),
      });
    expect((await control({ enabled: false })).status).toBe(200);
    expect((await prod.get('/ping')).status).toBe(200);
    await control({ enabled: true });
    expect((await prod.get('/ping')).status).toBe(500);
    await control({ restart: true });
    expect((await prod.get('/ping')).status).toBe(200);
    expect((await control({ enabled: 'yes' })).status).toBe(400);
  });

  it('rejects an invalid timeline when the simulator is created', () => {
    expect(() =>
      createSimulator({ apiKeys: ['k'], timeline: [{ at: 'soon', faults: [] }] as never }),
    ).toThrow();
    expect(() =>
      createSimulator({
        apiKeys: ['k'],
        timeline: [{ at: 0, faults: [{ fault: { kind: 'status', status: 302 } }] }] as never,
      }),
    ).toThrow();
  });
});

describe('DEMO_TIMELINE', () => {
  const clock = testClock();
  const start = clock.now();
  const faults = new FaultController({ now: clock.now, timeline: DEMO_TIMELINE });
  const allAt = (minute: number, environment: string) => {
    clock.set(start + minute * 60_000);
    return faults.timelineFaults(environment).map((r) => r.fault);
  };
  // The provider-list change is data, not trouble: the health phases below leave it aside.
  const kindsAt = (minute: number, environment: string) =>
    allAt(minute, environment).filter((f) => f.kind !== 'provider_list');
  const maxLatency = (minute: number, environment: string) =>
    Math.max(
      0,
      ...kindsAt(minute, environment).map((f) =>
        f.kind === 'latency' ? (f.ms ?? f.distribution?.max ?? 0) : 0,
      ),
    );
  const minLatency = (minute: number, environment: string) =>
    Math.min(
      ...kindsAt(minute, environment)
        .filter((f) => f.kind === 'latency')
        .map((f) => (f.kind === 'latency' ? (f.ms ?? f.distribution?.min ?? 0) : 0)),
    );

  it('walks production through healthy, warning, critical, errors, pending storm, contract trouble and recovery', () => {
    expect(maxLatency(1, 'production')).toBeLessThan(100);
    expect(kindsAt(1, 'production').every((f) => f.kind === 'latency')).toBe(true);
    expect(minLatency(4, 'production')).toBeGreaterThanOrEqual(500);
    expect(maxLatency(4, 'production')).toBeLessThan(1000);
    expect(minLatency(10, 'production')).toBeGreaterThan(1000);
    expect(kindsAt(16, 'production').some((f) => f.kind === 'status' && f.status >= 500)).toBe(
      true,
    );
    expect(kindsAt(16, 'production').some((f) => f.kind === 'hang')).toBe(true);
    const storm = kindsAt(21, 'production');
    expect(storm.some((f) => f.kind === 'qualify' && f.status === 'pending')).toBe(true);
    expect(storm.some((f) => f.kind === 'qualify' && f.status === 'retry_later')).toBe(true);
    expect(kindsAt(26, 'production').map((f) => f.kind)).toEqual(
      expect.arrayContaining(['not_gone', 'close_fail']),
    );
    expect(kindsAt(29, 'production').every((f) => f.kind === 'latency')).toBe(true);
    expect(maxLatency(29, 'production')).toBeLessThan(100);
  });

  it('keeps the sandbox mostly healthy with 429, 401, slow and not-gone blips', () => {
    const minutes = Array.from({ length: 30 }, (_, m) => m);
    const unhealthy = minutes.filter(
      (m) =>
        kindsAt(m, 'sandbox').some((f) => f.kind !== 'latency' && f.kind !== 'ingest_stall') ||
        maxLatency(m, 'sandbox') > 100,
    );
    expect(unhealthy.length).toBeLessThanOrEqual(12);
    const all = minutes.flatMap((m) => kindsAt(m, 'sandbox'));
    expect(all.some((f) => f.kind === 'status' && f.status === 429)).toBe(true);
    expect(all.some((f) => f.kind === 'status' && f.status === 401)).toBe(true);
    expect(all.some((f) => f.kind === 'not_gone')).toBe(true);
    expect(Math.max(...minutes.map((m) => maxLatency(m, 'sandbox')))).toBeGreaterThan(500);
  });

  it("stalls the sandbox's analytics ingestion from minute 8 to 15, and only there", () => {
    const minutes = Array.from({ length: 30 }, (_, m) => m);
    const stalled = (m: number, env: string) =>
      kindsAt(m, env).some((f) => f.kind === 'ingest_stall');
    expect(minutes.filter((m) => stalled(m, 'sandbox'))).toEqual([8, 9, 10, 11, 12, 13, 14]);
    expect(minutes.filter((m) => stalled(m, 'production'))).toEqual([]);
  });

  it('changes the provider list of every environment once per loop: a provider added from minute 10', () => {
    for (const environment of ['production', 'sandbox']) {
      const listed = Array.from({ length: 60 }, (_, m) =>
        allAt(m, environment).some((f) => f.kind === 'provider_list' && f.change === 'added'),
      );
      expect(listed.indexOf(true), environment).toBe(10);
      expect(listed.slice(10, 30).every(Boolean), environment).toBe(true);
      expect(listed.slice(30, 40).some(Boolean), environment).toBe(false);
      expect(listed.slice(40, 60).every(Boolean), environment).toBe(true);
    }
  });

  it('loops every DEMO_TIMELINE_PERIOD_MS', () => {
    for (const minute of [1, 4, 10, 16, 21, 26]) {
      expect(kindsAt(minute + DEMO_TIMELINE_PERIOD_MS / 60_000, 'production')).toEqual(
        kindsAt(minute, 'production'),
      );
    }
  });

  it('runs in a simulator: production fails in the server-error phase while the sandbox stays up', async () => {
    const demoClock = testClock();
    const demoStart = demoClock.now();
    const sim = await startTestSimulator({ now: demoClock.now, timeline: DEMO_TIMELINE });
    demoClock.set(demoStart + 16 * 60_000);
    // In the server-error phase some requests fail and some hang; sample with a client timeout.
    const outcomes = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const res = await rawRequest(`${sim.url}/env/production/ping`, {
        headers: { authorization: 'Bearer test-key-1', accept: 'application/json' },
        timeoutMs: 500,
      }).then(
        (r) => String(r.status),
        () => 'timeout',
      );
      outcomes.add(res);
    }
    expect([...outcomes].some((o) => o === '500' || o === '502')).toBe(true);
    expect((await client(`${sim.url}/env/sandbox`).get('/ping')).status).toBe(200);
  });
});
