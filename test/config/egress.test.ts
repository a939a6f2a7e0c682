/**
 * The egress keys of an environment (docs/configuration.md, "Egress proxy" and "Client
 * certificates"): what loads, and the exact message of each refusal with its key path. No
 * message quotes a proxy URL, a password or a key.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/index.js';
import { generateCertificates } from '../../src/simulator/certificates.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { environment, problems } from './helpers.js';

const ENV = { ISA_PRODUCTION_API_KEY: 'prod-key' };
const PASSWORD = 'Pr0xy-Secret-77';

let dir: string;
let cert: string;
let key: string;
let otherKey: string;
let expiredCert: string;
let expiredKey: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'isa-egress-'));
  const [own, other, expired] = await Promise.all([
    generateCertificates({ clientCertificateDays: 30 }),
    generateCertificates({ clientCertificateDays: 30 }),
    generateCertificates({ clientCertificateDays: -1 }),
  ]);
  cert = own.client?.certPem ?? '';
  key = own.client?.keyPem ?? '';
  otherKey = other.client?.keyPem ?? '';
  expiredCert = expired.client?.certPem ?? '';
  expiredKey = expired.client?.keyPem ?? '';
  for (const [name, text] of Object.entries({
    'client.crt': cert,
    'client.key': key,
    'other.key': otherKey,
    'expired.crt': expiredCert,
    'expired.key': expiredKey,
    'password.txt': `${PASSWORD}\n`,
    'garbage.key': 'not a key\n',
  })) {
    writeFileSync(join(dir, name), text);
  }
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const parse = (...lines: string[]) =>
  parseConfigText(environment(...lines), { checks: CHECK_LIST, env: ENV, cwd: dir });

describe('environments[] proxy keys', () => {
  it('loads proxy_url with credentials, no_proxy and proxy_connect_header', () => {
    const result = parse(
      `proxy_url: http://monitor:${PASSWORD}@proxy.internal:3128`,
      'no_proxy: localhost, .internal, 10.0.0.0/8',
      'proxy_connect_header: { X-Team: [isa] }',
    );
    expect(result.ok && result.config.environments[0]?.proxy).toEqual({
      url: 'http://proxy.internal:3128',
      username: 'monitor',
      password: PASSWORD,
      noProxy: ['localhost', '.internal', '10.0.0.0/8'],
      connectHeaders: { 'X-Team': ['isa'] },
      source: 'proxy_url',
    });
  });

  it('reads the password from proxy_password_file', () => {
    const result = parse(
      'proxy_url: http://monitor@proxy.internal:3128',
      'proxy_password_file: password.txt',
    );
    expect(result.ok && result.config.environments[0]?.proxy?.password).toBe(PASSWORD);
  });

  it('takes HTTPS_PROXY and NO_PROXY with proxy_from_environment', () => {
    const result = parseConfigText(environment('proxy_from_environment: true'), {
      checks: CHECK_LIST,
      env: { ...ENV, HTTPS_PROXY: 'proxy.internal:3128', NO_PROXY: 'a.example,b.example' },
    });
    expect(result.ok && result.config.environments[0]?.proxy).toMatchObject({
      url: 'http://proxy.internal:3128',
      noProxy: ['a.example', 'b.example'],
      source: 'HTTPS_PROXY',
    });
  });

  it.each([
    [
      [`proxy_url: https://monitor:${PASSWORD}@proxy.internal:3128`],
      'environments[0].proxy_url: must be an http:// URL of a proxy: http://[user:password@]host:port',
    ],
    [
      ['proxy_url: http://proxy.internal:3128', 'proxy_from_environment: true'],
      'environments[0].proxy_from_environment: set only one of proxy_url and proxy_from_environment',
    ],
    [
      ['no_proxy: localhost'],
      'environments[0].no_proxy: needs proxy_url (with proxy_from_environment, NO_PROXY applies)',
    ],
    [
      ['proxy_url: http://proxy.internal:3128', 'no_proxy: "bad host!"'],
      'environments[0].no_proxy: must be a comma-separated list of host names, .domains, IP addresses, CIDR blocks (each with an optional :port) or *',
    ],
    [
      ['proxy_connect_header: { X-Team: [isa] }'],
      'environments[0].proxy_connect_header: needs proxy_url or proxy_from_environment',
    ],
    [
      [
        `proxy_url: http://monitor:${PASSWORD}@proxy.internal:3128`,
        'proxy_password_file: password.txt',
      ],
      'environments[0].proxy_password_file: set the proxy password in proxy_url or in proxy_password_file, not both',
    ],
    [
      ['proxy_url: http://proxy.internal:3128', 'proxy_password_file: password.txt'],
      'environments[0].proxy_password_file: needs a user name in proxy_url (http://user@host:port)',
    ],
  ])('refuses %j', (lines, message) => {
    const found = problems(parse(...lines));
    expect(found).toEqual([message]);
    expect(found.join('\n')).not.toContain(PASSWORD);
  });

  it('names a missing password file by its key path', () => {
    expect(
      problems(parse('proxy_url: http://monitor@proxy.internal:3128', 'proxy_password_file: nope')),
    ).toEqual([
      `environments[0].proxy_password_file: cannot read ${join(dir, 'nope')}: no such file or directory`,
    ]);
  });
});

describe('environments[] client certificate keys', () => {
  it('loads a matching pair with its expiry', () => {
    const result = parse('client_cert_file: client.crt', 'client_key_file: client.key');
    const loaded = result.ok ? result.config.environments[0]?.clientCertificate : undefined;
    expect(loaded).toMatchObject({
      certFile: join(dir, 'client.crt'),
      keyFile: join(dir, 'client.key'),
    });
    expect(loaded?.notAfter).toBeGreaterThan(Date.now() / 1000);
  });

  it.each([
    [
      ['client_cert_file: client.crt'],
      'environments[0].client_key_file: is required with client_cert_file',
    ],
    [
      ['client_key_file: client.key'],
      'environments[0].client_cert_file: is required with client_key_file',
    ],
    [
      ['client_cert_file: missing.crt', 'client_key_file: client.key'],
      'environments[0].client_cert_file: cannot read DIR/missing.crt: no such file or directory',
    ],
    [
      ['client_cert_file: client.crt', 'client_key_file: garbage.key'],
      'environments[0].client_key_file: file DIR/garbage.key holds no unencrypted PEM private key',
    ],
    [
      ['client_cert_file: client.crt', 'client_key_file: other.key'],
      'environments[0].client_key_file: the key in DIR/other.key does not match the certificate in DIR/client.crt',
    ],
  ])('refuses %j', (lines, message) => {
    const found = problems(parse(...lines));
    expect(found).toEqual([message.replaceAll('DIR', dir)]);
    expect(found.join('\n')).not.toContain('PRIVATE KEY');
  });

  it('refuses an expired certificate with the day it expired', () => {
    const found = problems(parse('client_cert_file: expired.crt', 'client_key_file: expired.key'));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      new RegExp(
        `^environments\\[0\\]\\.client_cert_file: the certificate in ${join(dir, 'expired.crt')} expired on \\d{4}-\\d\\d-\\d\\dT`,
      ),
    );
  });
});
