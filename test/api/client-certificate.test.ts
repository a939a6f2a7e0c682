/**
 * Client certificates (docs/configuration.md, "Client certificates") against the simulator
 * requiring mutual TLS with a CA of its own: the client presents the environment's certificate,
 * directly and through tinyproxy's tunnel, and a certificate rotated in place on disk is presented
 * from the next connection on, without a new client.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { ClientIdentity } from '../../src/api/client-identity.js';
import { generateCertificates } from '../../src/simulator/certificates.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { startTinyproxy, type RunningTinyproxy } from '../support/tinyproxy.js';

const KEY = 'mtls-test-key-0123456789';

let sim: RunningSimulator;
let proxy: RunningTinyproxy;
let dir: string;
const clients: ApiClient[] = [];

beforeAll(async () => {
  [sim, proxy] = await Promise.all([
    startSimulator({ apiKeys: [KEY], tls: { validDays: 60, clientCertificateDays: 30 } }),
    startTinyproxy(),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'isa-mtls-'));
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await Promise.all([sim.close(), proxy.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

function files(cert: string, key: string) {
  const certFile = join(dir, 'client.crt');
  const keyFile = join(dir, 'client.key');
  writeFileSync(certFile, cert);
  writeFileSync(keyFile, key);
  return { certFile, keyFile };
}

function client(identity: ClientIdentity | undefined, viaProxy = false): ApiClient {
  const created = new ApiClient({
    baseUrl: sim.url,
    apiKey: KEY,
    userAgent: 'isa-monitor/test',
    ca: [sim.caPem ?? ''],
    ...(identity ? { identity } : {}),
    ...(viaProxy ? { proxy: { url: proxy.url, noProxy: [], connectHeaders: {} } } : {}),
  });
  clients.push(created);
  return created;
}

const ping = (api: ApiClient) =>
  api.request({
    operation: 'ping',
    method: 'GET',
    path: '/ping',
    timeoutMs: 5_000,
    freshConnection: true,
  });

describe('a client certificate', () => {
  it('is required by the simulator: without one the handshake fails', async () => {
    const response = await ping(client(undefined));
    expect(response.statusCode).toBeNull();
    expect(response.transportError?.reason).toBe('network_error');
  });

  it('is presented directly and through the proxy tunnel', async () => {
    const own = sim.certificates?.client;
    if (!own) throw new Error('the simulator made no client certificate');
    const pair = { cert: own.certPem, key: own.keyPem };
    const identity = new ClientIdentity(files(pair.cert, pair.key), pair);
    expect((await ping(client(identity))).statusCode).toBe(200);
    expect((await ping(client(identity, true))).statusCode).toBe(200);
    expect(proxy.log()).toContain(`CONNECT 127.0.0.1:${sim.port}`);
  });

  it('rotated in place on disk is presented from the next connection, same client', async () => {
    // Another CA's certificate first: the simulator refuses it.
    const stranger = (await generateCertificates({ clientCertificateDays: 30 })).client;
    const own = sim.certificates?.client;
    if (!stranger || !own) throw new Error('no client certificates made');
    const first = { cert: stranger.certPem, key: stranger.keyPem };
    const identity = new ClientIdentity(files(first.cert, first.key), first, 0);
    const api = client(identity);
    expect((await ping(api)).transportError?.reason).toBe('network_error');
    files(own.certPem, own.keyPem);
    expect((await ping(api)).statusCode).toBe(200);
    expect(identity.version).toBe(1);
  });

  it('keeps the previous pair while the files do not fit each other (a half-done rotation)', async () => {
    const own = sim.certificates?.client;
    const stranger = (await generateCertificates({ clientCertificateDays: 30 })).client;
    if (!stranger || !own) throw new Error('no client certificates made');
    const pair = { cert: own.certPem, key: own.keyPem };
    const identity = new ClientIdentity(files(pair.cert, pair.key), pair, 0);
    await identity.refresh();
    files(stranger.certPem, own.keyPem);
    await identity.refresh();
    expect(identity.pair).toEqual(pair);
    expect((await ping(client(identity))).statusCode).toBe(200);
  });
});
