/**
 * The front door in process, on real loopback sockets (docs/deploy.md, "TLS and basic auth"):
 * remembered bcrypt checks, the client certificate policy, and `/-/reload` without
 * `--web.enable-lifecycle`.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import express from 'express';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { BasicAuthVerifier } from '../../src/server/basic-auth.js';
import { createServerApp } from '../../src/server/app.js';
import { WebConfigSource } from '../../src/server/front-door.js';
import { listenBounded, type BoundedServer } from '../../src/server/listen.js';
import { StatusHistory } from '../../src/server/status.js';
import { webDoorWiring } from '../../src/server/web-door.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { testMetrics } from '../metrics/fixtures.js';
import { issue, makeCa, type IssuedFiles } from '../support/openssl-ca.js';

let dir = '';
let ca: IssuedFiles;
let client: IssuedFiles;
const listeners: BoundedServer[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'isa-front-door-'));
  ca = makeCa(dir);
  issue(dir, ca, 'server', 'server');
  client = issue(dir, ca, 'client', 'client');
});
afterEach(async () => {
  for (const listener of listeners.splice(0)) await listener.close();
});

const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('basic authentication', () => {
  it('pays bcrypt once per right password, and every time for a wrong one', async () => {
    const users = new Map([['prometheus', bcrypt.hashSync('right-pw', 10)]]);
    const verifier = new BasicAuthVerifier();
    const timed = async (header: string | undefined) => {
      const began = performance.now();
      const ok = await verifier.verify(users, header);
      return { ok, ms: performance.now() - began };
    };
    const first = await timed(basic('prometheus', 'right-pw'));
    const again = await timed(basic('prometheus', 'right-pw'));
    expect(first.ok && again.ok).toBe(true);
    expect(first.ms).toBeGreaterThan(10 * again.ms);
    expect((await timed(basic('prometheus', 'wrong-pw'))).ok).toBe(false);
    const unknown = await timed(basic('nobody', 'right-pw'));
    // An unknown user costs a bcrypt check too: the timing does not tell which names exist.
    expect(unknown.ok).toBe(false);
    expect(unknown.ms).toBeGreaterThan(10 * again.ms);
    expect((await timed(undefined)).ok).toBe(false);
    expect((await timed('Bearer abc')).ok).toBe(false);
    // A changed hash is not matched by what was remembered for the old one.
    users.set('prometheus', bcrypt.hashSync('new-pw', 4));
    expect((await timed(basic('prometheus', 'right-pw'))).ok).toBe(false);
    expect(await verifier.verify(new Map(), undefined)).toBe(true);
  });
});

async function serveWith(web: Record<string, unknown>): Promise<number> {
  const file = join(dir, `web-${listeners.length}.yml`);
  writeFileSync(file, stringify(web));
  const opened = WebConfigSource.open(file);
  if (!opened.ok) throw new Error(JSON.stringify(opened.problems));
  const logger = pino({ level: 'silent' });
  const wiring = webDoorWiring(
    {
      source: opened.source,
      reloadRoute: { enabled: false, reload: () => Promise.resolve({ applied: true }) },
    },
    logger,
  );
  const app = createServerApp({
    registry: testMetrics().registry,
    status: new StatusHistory({ checks: CHECK_LIST }),
    isReady: () => true,
    ...wiring.app,
  });
  const listener = await listenBounded(app, {
    host: '127.0.0.1',
    port: 0,
    logger,
    ...wiring.listen,
  });
  listeners.push(listener);
  return (listener.server.address() as AddressInfo).port;
}

function get(port: number, path: string, opts: { cert?: IssuedFiles; method?: string } = {}) {
  return new Promise<number>((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: opts.method ?? 'GET',
        agent: false,
        ca: readFileSync(ca.cert),
        ...(opts.cert
          ? { cert: readFileSync(opts.cert.cert), key: readFileSync(opts.cert.key) }
          : {}),
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', () => resolve(0));
    req.end();
  });
}

const tls = (clientAuthType: string) => ({
  tls_server_config: {
    cert_file: 'server.crt',
    key_file: 'server.key',
    client_auth_type: clientAuthType,
    client_ca_file: 'isa-test-ca.crt',
  },
});

describe('client certificates', () => {
  it('RequireAndVerifyClientCert serves a client with a certificate of the CA only', async () => {
    const port = await serveWith(tls('RequireAndVerifyClientCert'));
    expect(await get(port, '/healthz', { cert: client })).toBe(200);
    expect(await get(port, '/healthz')).toBe(0);
    const stranger = issue(dir, makeCa(mkdtempSync(join(dir, 'other-'))), 'stranger', 'client');
    expect(await get(port, '/healthz', { cert: stranger })).toBe(0);
  });

  it('RequireAnyClientCert wants a certificate, VerifyClientCertIfGiven a verified one if any', async () => {
    const stranger = issue(dir, makeCa(mkdtempSync(join(dir, 'other-'))), 'stranger2', 'client');
    const any = await serveWith(tls('RequireAnyClientCert'));
    expect(await get(any, '/healthz')).toBe(0);
    expect(await get(any, '/healthz', { cert: stranger })).toBe(200);
    const ifGiven = await serveWith(tls('VerifyClientCertIfGiven'));
    expect(await get(ifGiven, '/healthz')).toBe(200);
    expect(await get(ifGiven, '/healthz', { cert: client })).toBe(200);
    expect(await get(ifGiven, '/healthz', { cert: stranger })).toBe(0);
  });
});

describe('/-/reload without --web.enable-lifecycle', () => {
  it('answers 403, as Prometheus does', async () => {
    const app = express();
    app.use(
      createServerApp({
        registry: testMetrics().registry,
        status: new StatusHistory({ checks: CHECK_LIST }),
        isReady: () => true,
      }),
    );
    const listener = await listenBounded(app, {
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
    });
    listeners.push(listener);
    const { port } = listener.server.address() as AddressInfo;
    for (const method of ['POST', 'PUT']) {
      const res = await fetch(`http://127.0.0.1:${port}/-/reload`, { method });
      expect([method, res.status, await res.text()]).toEqual([
        method,
        403,
        'Lifecycle API is not enabled.\n',
      ]);
    }
  });
});
