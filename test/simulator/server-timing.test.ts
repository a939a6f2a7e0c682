import { describe, expect, it } from 'vitest';
import { API_KEY, rawRequest, startTestSimulator } from './helpers.js';

const auth = { authorization: `Bearer ${API_KEY}`, accept: 'application/json' };

function serverTimingMs(header: string | string[] | undefined): number {
  const match = /^sim;dur=(\d+\.\d{3})$/.exec(String(header));
  if (!match) throw new Error(`bad Server-Timing: ${String(header)}`);
  return Number(match[1]);
}

describe('Server-Timing', () => {
  it('is on every kind of response, with three decimals, and never exceeds what the client measured', async () => {
    const sim = await startTestSimulator();
    const responses = [
      await rawRequest(`${sim.url}/ping`, { headers: auth }),
      await rawRequest(`${sim.url}/ping`, { headers: { accept: 'application/json' } }), // 401
      await rawRequest(`${sim.url}/nope`, {}), // HTML 404
      await rawRequest(`${sim.url}/coverage`, { headers: auth }), // 400
      await rawRequest(`${sim.url}/sessions`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ street1: '1 Instant Way', zip: '80202' }),
      }),
      await rawRequest(`${sim.url}/ping`, {
        headers: { ...auth, 'x-isa-sim-fault': '{"kind":"malformed"}' },
      }),
      await rawRequest(`${sim.url}/__sim/faults`, {}),
    ];
    for (const res of responses) {
      const ms = serverTimingMs(res.headers['server-timing']);
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThanOrEqual(res.elapsedMs);
    }
  });

  it('includes injected latency', async () => {
    const sim = await startTestSimulator();
    const res = await rawRequest(`${sim.url}/ping`, {
      headers: { ...auth, 'x-isa-sim-fault': '{"kind":"latency","ms":150}' },
    });
    const ms = serverTimingMs(res.headers['server-timing']);
    expect(ms).toBeGreaterThanOrEqual(149);
    expect(ms).toBeLessThan(1000);
    expect(res.elapsedMs).toBeGreaterThanOrEqual(ms);
  });

  it('is small for a plain ping (the simulator itself is fast)', async () => {
    const sim = await startTestSimulator();
    await rawRequest(`${sim.url}/ping`, { headers: auth }); // warm-up
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await rawRequest(`${sim.url}/ping`, { headers: auth });
      times.push(serverTimingMs(res.headers['server-timing']));
    }
    // Below the API's 100 ms "expected" bound, so the simulator alone never makes a ping slow. A
    // delay of the simulator's own is in every ping, the fastest included; a busy machine's stall
    // lands in some of them, not all five.
    expect(Math.min(...times), `Server-Timing ${times.join(', ')} ms`).toBeLessThan(100);
  });
});
