import { createServer as createHttpServer } from 'node:http';
import {
  createServer as createTcpServer,
  type AddressInfo,
  type Server,
  type Socket,
} from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  startSimulator,
  type CertificateOptions,
  type RunningSimulator,
} from '../../simulator/index.js';
import { classifyCertificate, inspectCertificate, type ChainObservation } from './inspect.js';

const DAY_SECONDS = 86_400;

const simulators: RunningSimulator[] = [];
afterAll(async () => {
  await Promise.all(simulators.map((sim) => sim.close()));
});

async function https(tls: CertificateOptions = {}): Promise<RunningSimulator> {
  const sim = await startSimulator({ apiKeys: ['k'], port: 0, tls });
  simulators.push(sim);
  return sim;
}

const servers: Server[] = [];
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await Promise.all(
    servers
      .splice(0)
      .map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
  );
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('inspectCertificate against the simulator over HTTPS', () => {
  it('is ok for a trusted, matching certificate with time to spare, and reads its expiry', async () => {
    const sim = await https({ validDays: 30 });
    const facts = await inspectCertificate({
      url: `${sim.url}/some/path`,
      ca: [sim.caPem ?? ''],
      timeoutMs: 5_000,
    });
    expect(facts).toMatchObject({
      result: 'ok',
      reason: null,
      verified: true,
      authorized: true,
      authorizationError: null,
      hostnameMatches: true,
      hostnameError: null,
      chainLength: 2,
    });
    expect(facts.earliestNotAfter).toBe((sim.certificates?.notAfter.getTime() ?? 0) / 1000);
    expect(facts.daysLeft).toBeGreaterThan(29.9);
    expect(facts.daysLeft).toBeLessThanOrEqual(30);
  });

  it('reads a certificate by host name too, sending it as SNI', async () => {
    const sim = await https();
    const facts = await inspectCertificate({
      url: `https://localhost:${sim.port}`,
      ca: [sim.caPem ?? ''],
      timeoutMs: 5_000,
    });
    expect(facts).toMatchObject({ result: 'ok', verified: true });
  });

  it('is expiring for a 5-day certificate with minDays 14', async () => {
    const sim = await https({ validDays: 5 });
    const facts = await inspectCertificate({
      url: sim.url,
      ca: [sim.caPem ?? ''],
      timeoutMs: 5_000,
      minDays: 14,
    });
    expect(facts).toMatchObject({ result: 'expiring', reason: null, verified: true });
    expect(facts.daysLeft).toBeCloseTo(5, 1);
  });

  it('is expired for a certificate that ended yesterday, with its expiry still reported', async () => {
    const sim = await https({ validDays: -1 });
    const facts = await inspectCertificate({
      url: sim.url,
      ca: [sim.caPem ?? ''],
      timeoutMs: 5_000,
    });
    expect(facts).toMatchObject({
      result: 'expired',
      reason: 'CERT_HAS_EXPIRED',
      verified: false,
      authorized: false,
      authorizationError: 'CERT_HAS_EXPIRED',
    });
    expect(facts.daysLeft).toBeCloseTo(-1, 1);
  });

  it('is untrusted without the CA, and still reads the chain', async () => {
    const sim = await https();
    const facts = await inspectCertificate({ url: sim.url, timeoutMs: 5_000 });
    expect(facts).toMatchObject({
      result: 'untrusted',
      reason: 'SELF_SIGNED_CERT_IN_CHAIN',
      verified: false,
      authorized: false,
      hostnameMatches: true,
      chainLength: 2,
    });
    expect(facts.earliestNotAfter).toBe((sim.certificates?.notAfter.getTime() ?? 0) / 1000);
  });

  it('is hostname_mismatch for a trusted certificate issued to another name', async () => {
    const sim = await https({ hosts: ['elsewhere.invalid'] });
    const facts = await inspectCertificate({
      url: sim.url,
      ca: [sim.caPem ?? ''],
      timeoutMs: 5_000,
    });
    expect(facts).toMatchObject({
      result: 'hostname_mismatch',
      reason: 'ERR_TLS_CERT_ALTNAME_INVALID',
      verified: false,
      authorized: true,
      hostnameMatches: false,
    });
  });
});

describe('inspectCertificate when no chain can be read', () => {
  it('is network_error for a closed port', async () => {
    const port = await listen(createTcpServer());
    await new Promise<void>((resolve) => servers.pop()?.close(() => resolve()));
    const facts = await inspectCertificate({ url: `https://127.0.0.1:${port}`, timeoutMs: 5_000 });
    expect(facts).toMatchObject({
      result: 'network_error',
      reason: 'ECONNREFUSED',
      earliestNotAfter: null,
      daysLeft: null,
      verified: false,
      chainLength: 0,
    });
  });

  it('is timeout for a server that accepts and never answers', async () => {
    const port = await listen(createTcpServer());
    const facts = await inspectCertificate({ url: `https://127.0.0.1:${port}`, timeoutMs: 300 });
    expect(facts).toMatchObject({ result: 'timeout', reason: 'TIMEOUT', earliestNotAfter: null });
    expect(facts.durationMs).toBeGreaterThanOrEqual(290);
  });

  it('is handshake_failed for a plain HTTP server', async () => {
    const port = await listen(createHttpServer((_req, res) => res.end('plain')));
    const facts = await inspectCertificate({ url: `https://127.0.0.1:${port}`, timeoutMs: 5_000 });
    expect(facts.result).toBe('handshake_failed');
    expect(facts.reason).toMatch(/^[A-Z][A-Z0-9_]+$/);
  });

  it('ends as timeout with the reason ABORTED when its signal aborts', async () => {
    const port = await listen(createTcpServer());
    const controller = new AbortController();
    const pending = inspectCertificate({
      url: `https://127.0.0.1:${port}`,
      timeoutMs: 10_000,
      signal: controller.signal,
    });
    controller.abort();
    expect(await pending).toMatchObject({ result: 'timeout', reason: 'ABORTED' });
  });

  it('refuses a URL that is not https, without repeating it', async () => {
    await expect(
      inspectCertificate({ url: 'http://user:secret@example.invalid', timeoutMs: 1_000 }),
    ).rejects.toThrow(/^url must use https:$/);
  });
});

describe('classifyCertificate', () => {
  const now = 2_000_000_000;
  const good: ChainObservation = {
    chainLength: 2,
    earliestNotAfter: now + 30 * DAY_SECONDS,
    authorized: true,
    authorizationError: null,
    hostnameMatches: true,
    hostnameError: null,
  };
  const at = { nowSeconds: now, minDays: 14 };

  it('puts expired before every other problem', () => {
    expect(
      classifyCertificate(
        {
          ...good,
          earliestNotAfter: now,
          authorized: false,
          authorizationError: 'SELF_SIGNED_CERT_IN_CHAIN',
          hostnameMatches: false,
          hostnameError: 'ERR_TLS_CERT_ALTNAME_INVALID',
        },
        at,
      ),
    ).toEqual({ result: 'expired', reason: 'CERT_HAS_EXPIRED', daysLeft: 0 });
  });

  it('puts a host name mismatch before an untrusted chain', () => {
    expect(
      classifyCertificate(
        {
          ...good,
          authorized: false,
          authorizationError: 'SELF_SIGNED_CERT_IN_CHAIN',
          hostnameMatches: false,
          hostnameError: 'ERR_TLS_CERT_ALTNAME_INVALID',
        },
        at,
      ).result,
    ).toBe('hostname_mismatch');
  });

  it('puts an untrusted chain before a near expiry', () => {
    expect(
      classifyCertificate(
        {
          ...good,
          earliestNotAfter: now + DAY_SECONDS,
          authorized: false,
          authorizationError: 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
        },
        at,
      ),
    ).toMatchObject({ result: 'untrusted', reason: 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY' });
  });

  it('is expiring under minDays left and ok at exactly minDays', () => {
    const expiring = { ...good, earliestNotAfter: now + 14 * DAY_SECONDS - 1 };
    expect(classifyCertificate(expiring, at).result).toBe('expiring');
    expect(classifyCertificate({ ...good, earliestNotAfter: now + 14 * DAY_SECONDS }, at)).toEqual({
      result: 'ok',
      reason: null,
      daysLeft: 14,
    });
  });
});
