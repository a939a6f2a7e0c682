import { rootCertificates } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { ApiClient, withSystemRoots } from '../../src/api/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { API_KEY, USER_AGENT } from './helpers.js';
import { ping } from '../../src/checks/ping/request.js';

let sim: RunningSimulator;
let expired: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [API_KEY], port: 0, tls: {} });
  expired = await startSimulator({ apiKeys: [API_KEY], port: 0, tls: { validDays: -1 } });
});
afterAll(async () => {
  await Promise.all([sim.close(), expired.close()]);
});

const clients: ApiClient[] = [];
function client(baseUrl: string, ca?: string[]): ApiClient {
  const made = new ApiClient({
    baseUrl,
    apiKey: API_KEY,
    userAgent: USER_AGENT,
    ...(ca ? { ca } : {}),
  });
  clients.push(made);
  return made;
}
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

describe('ApiClient with extra certificate authorities (ca)', () => {
  it('reaches an HTTPS API whose certificate a given CA signed', async () => {
    const response = await ping(client(sim.url, [sim.caPem ?? '']), { timeoutMs: 5_000 });
    expect(response.transportError).toBeNull();
    expect(response.statusCode).toBe(200);
    // The answer came over a TLS connection this call opened: its handshake was measured, took
    // time, and fits inside the call (docs/metrics.md, isa_ping_phase_duration_seconds).
    expect(sim.url).toMatch(/^https:\/\//);
    expect(response.connectionOpened).toBe(true);
    expect(response.phases.tls).toBeGreaterThan(0);
    expect(response.phases.tls).toBeLessThan(response.durationMs);
  });

  it('trusts the CA on new connections too (freshConnection)', async () => {
    const api = client(sim.url, [sim.caPem ?? '']);
    for (let i = 0; i < 2; i++) {
      const response = await ping(api, { timeoutMs: 5_000, freshConnection: true });
      expect(response.statusCode).toBe(200);
      expect(response.connectionOpened).toBe(true);
    }
  });

  it('without the CA, reports a network_error with the verification code, not a crash', async () => {
    const response = await ping(client(sim.url), { timeoutMs: 5_000 });
    expect(response.statusCode).toBeNull();
    expect(response.transportError).toMatchObject({
      reason: 'network_error',
      code: 'SELF_SIGNED_CERT_IN_CHAIN',
    });
    expect(response.transportError?.message.length).toBeLessThanOrEqual(200);
    expect(response.transportError?.message).not.toContain(API_KEY);
  });

  it('still refuses an expired certificate of a trusted CA', async () => {
    const response = await ping(client(expired.url, [expired.caPem ?? '']), { timeoutMs: 5_000 });
    expect(response.transportError).toMatchObject({
      reason: 'network_error',
      code: 'CERT_HAS_EXPIRED',
    });
  });

  it('does not trust a server because some other CA was added', async () => {
    const response = await ping(client(sim.url, [expired.caPem ?? '']), { timeoutMs: 5_000 });
    expect(response.transportError?.code).toBe('SELF_SIGNED_CERT_IN_CHAIN');
  });

  it('adds the extra CAs to the system roots instead of replacing them', () => {
    const extra = [sim.caPem ?? ''];
    expect(withSystemRoots(extra)).toEqual([...rootCertificates, ...extra]);
    expect(rootCertificates.length).toBeGreaterThan(50);
  });

  it('refuses ca together with an injected dispatcher', () => {
    const dispatcher = new Agent();
    expect(
      () =>
        new ApiClient({
          baseUrl: sim.url,
          apiKey: API_KEY,
          userAgent: USER_AGENT,
          dispatcher,
          ca: [sim.caPem ?? ''],
        }),
    ).toThrow(/ca cannot be combined with an injected dispatcher/);
    void dispatcher.close();
  });
});
