/**
 * The egress proxy (docs/configuration.md, "Egress proxy") against a real tinyproxy: `http`
 * targets in absolute form, `https` targets through CONNECT (the tls check too), credentials,
 * `no_proxy`, and a proxy that refuses, asks for other credentials or never answers, each named
 * as the proxy's failure. tinyproxy's own log shows what went through it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import type { ProxySettings } from '../../src/api/proxy.js';
import { requestFailure } from '../../src/checks/shared/request.js';
import { inspectCertificate } from '../../src/checks/tls/inspect.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { startSilentProxy, startTinyproxy, type RunningTinyproxy } from '../support/tinyproxy.js';

const KEY = 'proxy-test-key-0123456789';
const USER = 'monitor';
const PASSWORD = 'proxy-Secret-4711';

let httpSim: RunningSimulator;
let httpsSim: RunningSimulator;
let proxy: RunningTinyproxy;
let strictProxy: RunningTinyproxy;
let silent: { url: string; close(): Promise<void> };
const clients: ApiClient[] = [];

beforeAll(async () => {
  [httpSim, httpsSim, proxy, strictProxy, silent] = await Promise.all([
    startSimulator({ apiKeys: [KEY] }),
    startSimulator({ apiKeys: [KEY], tls: { validDays: 60 } }),
    startTinyproxy({ basicAuth: { user: USER, password: PASSWORD } }),
    // CONNECT only to 443: the simulator's port is refused.
    startTinyproxy({ connectPorts: [443] }),
    startSilentProxy(),
  ]);
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await Promise.all([httpSim, httpsSim].map((sim) => sim.close()));
  await Promise.all([proxy.stop(), strictProxy.stop(), silent.close()]);
});

function settings(url: string, overrides: Partial<ProxySettings> = {}): ProxySettings {
  return { url, username: USER, password: PASSWORD, noProxy: [], connectHeaders: {}, ...overrides };
}

function client(sim: RunningSimulator, proxySettings: ProxySettings): ApiClient {
  const created = new ApiClient({
    baseUrl: sim.url,
    apiKey: KEY,
    userAgent: 'isa-monitor/test',
    ...(sim.caPem ? { ca: [sim.caPem] } : {}),
    proxy: proxySettings,
  });
  clients.push(created);
  return created;
}

function ping(api: ApiClient, timeoutMs = 5_000) {
  return api.request({
    operation: 'ping',
    method: 'GET',
    path: '/ping',
    timeoutMs,
    freshConnection: true,
  });
}

describe('requests through an egress proxy', () => {
  it('sends an http target to the proxy in absolute form, with its credentials', async () => {
    const response = await ping(client(httpSim, settings(proxy.url)));
    expect(response.statusCode).toBe(200);
    // connect is the TCP handshake with the proxy; there is no tls on http.
    expect(response.phases.connect).toBeGreaterThanOrEqual(0);
    expect(response.phases.tls).toBeUndefined();
    expect(proxy.log()).toContain(`GET http://127.0.0.1:${httpSim.port}/ping`);
  });

  it('tunnels an https target through CONNECT, TLS end to end with the partner', async () => {
    const response = await ping(client(httpsSim, settings(proxy.url)));
    expect(response.statusCode).toBe(200);
    expect(response.transportError).toBeNull();
    // connect runs to the tunnel's 200, tls is the handshake with the partner inside it.
    expect(response.phases.connect).toBeGreaterThan(0);
    expect(response.phases.tls).toBeGreaterThan(0);
    expect(response.connectionOpened).toBe(true);
    expect(proxy.log()).toContain(`CONNECT 127.0.0.1:${httpsSim.port}`);
  });

  it('sends proxy_connect_header with the CONNECT', async () => {
    const response = await ping(
      client(httpsSim, settings(proxy.url, { connectHeaders: { 'X-Egress-Team': ['isa'] } })),
    );
    expect(response.statusCode).toBe(200);
  });

  it('goes direct to a host no_proxy lists, and the proxy sees nothing', async () => {
    const before = proxy.log().split(`:${httpSim.port}/`).length;
    const response = await ping(
      client(httpSim, settings(proxy.url, { noProxy: ['example.org', '127.0.0.0/8'] })),
    );
    expect(response.statusCode).toBe(200);
    expect(proxy.log().split(`:${httpSim.port}/`).length).toBe(before);
  });

  it('names a 407 on CONNECT as the proxy asking for credentials, without the password', async () => {
    const response = await ping(
      client(httpsSim, settings(proxy.url, { password: 'wrong-Pass-99' })),
    );
    expect(response.transportError).toMatchObject({
      reason: 'proxy_error',
      code: 'PROXY_AUTH_REQUIRED',
    });
    expect(requestFailure(response)).toBe('proxy_error');
    expect(JSON.stringify(response)).not.toContain('wrong-Pass-99');
  });

  it('reads a 407 to an http request as the proxy failing, not the partner', async () => {
    // Without credentials tinyproxy answers 407 (wrong ones get a 401, docs/configuration.md).
    const response = await ping(client(httpSim, settings(proxy.url, { username: '' })));
    expect(response.statusCode).toBe(407);
    expect(requestFailure(response)).toBe('proxy_error');
  });

  it('names a refused CONNECT (ConnectPort) as the proxy refusing', async () => {
    const response = await ping(client(httpsSim, settings(strictProxy.url, { username: '' })));
    expect(response.transportError).toMatchObject({ reason: 'proxy_error', code: 'PROXY_REFUSED' });
    expect(response.transportError?.message).toContain('403');
  });

  it('names a CONNECT that never answers as the proxy timing out, at the call deadline', async () => {
    const started = performance.now();
    const response = await ping(client(httpsSim, settings(silent.url)), 400);
    expect(response.transportError).toMatchObject({ reason: 'proxy_error', code: 'PROXY_TIMEOUT' });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('names an unreachable proxy as the proxy, for http and https targets', async () => {
    await silent.close();
    const gone = settings(silent.url);
    for (const sim of [httpSim, httpsSim]) {
      const response = await ping(client(sim, gone));
      expect(response.transportError).toMatchObject({
        reason: 'proxy_error',
        code: 'PROXY_UNREACHABLE',
      });
    }
    silent = await startSilentProxy();
  });
});

describe('the tls check through an egress proxy', () => {
  it("reads the partner's chain through the tunnel", async () => {
    const facts = await inspectCertificate({
      url: httpsSim.url,
      ca: [httpsSim.caPem ?? ''],
      proxy: settings(proxy.url),
      timeoutMs: 5_000,
    });
    expect(facts.result).toBe('ok');
    expect(facts.earliestNotAfter).toBe((httpsSim.certificates?.notAfter.getTime() ?? 0) / 1000);
    expect(proxy.log()).toContain(`CONNECT 127.0.0.1:${httpsSim.port}`);
  });

  it('ends as proxy_error with the proxy code when the proxy refuses or is silent', async () => {
    const refused = await inspectCertificate({
      url: httpsSim.url,
      proxy: settings(proxy.url, { password: 'wrong-Pass-99' }),
      timeoutMs: 5_000,
    });
    expect(refused).toMatchObject({ result: 'proxy_error', reason: 'PROXY_AUTH_REQUIRED' });
    const stalled = await inspectCertificate({
      url: httpsSim.url,
      proxy: settings(silent.url),
      timeoutMs: 300,
    });
    expect(stalled).toMatchObject({ result: 'proxy_error', reason: 'PROXY_TIMEOUT' });
  });
});
