import { X509Certificate } from 'node:crypto';
import { request } from 'node:https';
import { afterEach, describe, expect, it } from 'vitest';
import { generateCertificates } from '../../src/simulator/certificates.js';
import {
  startSimulator,
  type CertificateOptions,
  type RunningSimulator,
} from '../../src/simulator/index.js';

const KEY = 'https-test-key';
const DAY_MS = 86_400_000;

const running: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((sim) => sim.close()));
});

async function startHttps(tls: CertificateOptions = {}): Promise<RunningSimulator> {
  const sim = await startSimulator({ apiKeys: [KEY], port: 0, tls });
  running.push(sim);
  return sim;
}

/** GET `path` over HTTPS; resolves with the status or the client's error code. */
function get(
  url: string,
  path: string,
  ca: string | undefined,
): Promise<{ status: number } | { code: string }> {
  return new Promise((resolve) => {
    const req = request(
      `${url}${path}`,
      {
        headers: { authorization: `Bearer ${KEY}`, accept: 'application/json' },
        ...(ca === undefined ? {} : { ca }),
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ code: err.code ?? err.message }));
    req.end();
  });
}

describe('the simulator over HTTPS', () => {
  it('answers /ping on an https:// URL to a client that trusts its CA', async () => {
    const sim = await startHttps();
    expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.caPem).toContain('-----BEGIN CERTIFICATE-----');
    expect(await get(sim.url, '/ping', sim.caPem ?? undefined)).toEqual({ status: 200 });
  });

  it('is refused by a client that does not trust its CA', async () => {
    const sim = await startHttps();
    expect(await get(sim.url, '/ping', undefined)).toEqual({ code: 'SELF_SIGNED_CERT_IN_CHAIN' });
  });

  it('is refused as expired with a certificate whose validity ended yesterday', async () => {
    const sim = await startHttps({ validDays: -1 });
    expect(await get(sim.url, '/ping', sim.caPem ?? undefined)).toEqual({
      code: 'CERT_HAS_EXPIRED',
    });
  });

  it('fails host name verification with a certificate for another name', async () => {
    const sim = await startHttps({ hosts: ['elsewhere.invalid'] });
    expect(await get(sim.url, '/ping', sim.caPem ?? undefined)).toEqual({
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
  });

  it('stays plain HTTP without tls, with no CA', async () => {
    const sim = await startSimulator({ apiKeys: [KEY], port: 0 });
    running.push(sim);
    expect(sim.url).toMatch(/^http:\/\//);
    expect(sim.caPem).toBeNull();
    expect(sim.certificates).toBeNull();
  });
});

describe('generateCertificates', () => {
  it('issues the server certificate until the notAfter asked for, to the second', async () => {
    const notAfter = new Date(Date.UTC(2031, 4, 6, 7, 8, 9));
    const certs = await generateCertificates({ notAfter });
    const cert = new X509Certificate(certs.certPem);
    expect(Date.parse(cert.validTo)).toBe(notAfter.getTime());
    expect(certs.notAfter).toEqual(notAfter);
  });

  it('counts validDays from its clock', async () => {
    const now = Date.UTC(2030, 0, 1, 12, 0, 0);
    const certs = await generateCertificates({ validDays: 5, now: () => now });
    const cert = new X509Certificate(certs.certPem);
    expect(Date.parse(cert.validTo)).toBe(now + 5 * DAY_MS);
    expect(Date.parse(cert.validFrom)).toBeLessThan(now);
  });

  it('makes an expired certificate for a negative lifetime, signed by a CA that is still valid', async () => {
    const certs = await generateCertificates({ validDays: -1 });
    const cert = new X509Certificate(certs.certPem);
    const ca = new X509Certificate(certs.caPem);
    expect(Date.parse(cert.validTo)).toBeLessThan(Date.now() - DAY_MS + 60_000);
    expect(Date.parse(cert.validFrom)).toBeLessThan(Date.parse(cert.validTo));
    expect(Date.parse(ca.validTo)).toBeGreaterThan(Date.now());
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
  });

  it('names localhost and 127.0.0.1 by default, and exactly the hosts asked for otherwise', async () => {
    const plain = new X509Certificate((await generateCertificates()).certPem);
    expect(plain.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1');
    expect(plain.checkHost('localhost')).toBe('localhost');
    expect(plain.checkIP('127.0.0.1')).toBe('127.0.0.1');
    const other = new X509Certificate(
      (await generateCertificates({ hosts: ['elsewhere.invalid'] })).certPem,
    );
    expect(other.checkHost('localhost')).toBeUndefined();
    expect(other.checkIP('127.0.0.1')).toBeUndefined();
  });

  it('returns the chain as the server certificate followed by its CA', async () => {
    const certs = await generateCertificates();
    expect(certs.chainPem).toBe(certs.certPem + certs.caPem);
    expect(new X509Certificate(certs.caPem).ca).toBe(true);
    expect(new X509Certificate(certs.certPem).ca).toBe(false);
  });

  it('refuses a validity that ends before it starts', async () => {
    await expect(
      generateCertificates({ notBefore: new Date(2030, 0, 2), notAfter: new Date(2030, 0, 1) }),
    ).rejects.toThrow(RangeError);
  });
});
