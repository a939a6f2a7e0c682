/**
 * The web configuration's messages (docs/deploy.md, "TLS and basic auth"): every problem at once,
 * each with its key path, pinned exactly; a key of the exporter-toolkit format this server does
 * not implement is refused by name, and no hash or password is echoed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { checkWebConfig, readWebConfig } from '../../src/server/web-config.js';
import { issue, makeCa } from '../support/openssl-ca.js';

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'isa-web-config-'));
  const ca = makeCa(dir);
  issue(dir, ca, 'server', 'server');
  issue(dir, ca, 'other', 'server');
});

const problemsOf = (yaml: string) => {
  const result = checkWebConfig(parse(yaml) ?? {}, dir);
  return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.message}`);
};

const HASH = bcrypt.hashSync('secret-pw', 4);

describe('web configuration', () => {
  it('accepts an empty file (plain HTTP, no authentication) and a full one', () => {
    expect(problemsOf('')).toEqual([]);
    const full = checkWebConfig(
      parse(`
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: isa-test-ca.crt
  min_version: TLS13
http_server_config:
  http2: true
  headers:
    X-Frame-Options: sameorigin
    Content-Security-Policy: ""
basic_auth_users:
  prometheus: "${HASH.replace('$2b$', '$2y$')}"
`),
      dir,
    );
    expect(full.ok).toBe(true);
    if (!full.ok) return;
    expect(full.config.serverTls).toMatchObject({ minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' });
    expect(full.config.tlsOptions).toMatchObject({ requestCert: true, rejectUnauthorized: true });
    // Blank means unset, as in exporter-toolkit.
    expect(full.config.headers).toEqual({ 'X-Frame-Options': 'sameorigin' });
    expect([...full.config.users.keys()]).toEqual(['prometheus']);
  });

  it.each([
    ['tls: {}', ['tls: unknown key']],
    ['basic_auth_user: {}', ['basic_auth_user: unknown key (did you mean basic_auth_users?)']],
    [
      'rate_limit: { interval: 1s, burst: 2 }',
      [
        'rate_limit: not supported by isa-monitor: the listener has its own limits (docs/deploy.md, "Listener limits")',
      ],
    ],
    [
      'tls_server_config: { cert_file: server.crt, key_file: server.key, cipher_suites: [] }',
      [
        "tls_server_config.cipher_suites: not supported by isa-monitor: Node's default cipher suites are used",
      ],
    ],
    [
      'tls_server_config: { cert: x, key: y }',
      [
        'tls_server_config.cert: not supported by isa-monitor: give the certificate as cert_file',
        'tls_server_config.key: not supported by isa-monitor: give the key as key_file',
        'tls_server_config.cert_file: required: a file name',
        'tls_server_config.key_file: required: a file name',
      ],
    ],
    [
      'tls_server_config: { cert_file: server.crt, key_file: other.key }',
      ['tls_server_config.key_file: does not match the certificate of cert_file'],
    ],
    [
      'tls_server_config: { cert_file: none.crt, key_file: server.key }',
      ['tls_server_config.cert_file: cannot read: no such file or directory'],
    ],
    [
      'tls_server_config: { cert_file: server.crt, key_file: server.key, client_auth_type: RequireAndVerifyClientCert }',
      ['tls_server_config.client_ca_file: required by RequireAndVerifyClientCert'],
    ],
    [
      'tls_server_config: { cert_file: server.crt, key_file: server.key, client_ca_file: isa-test-ca.crt }',
      [
        'tls_server_config.client_auth_type: client_ca_file is set but client_auth_type is NoClientCert',
      ],
    ],
    [
      'tls_server_config: { cert_file: server.crt, key_file: server.key, min_version: TLS13, max_version: TLS12 }',
      ['tls_server_config.min_version: is above max_version'],
    ],
    [
      'tls_server_config: { cert_file: server.crt, key_file: server.key, min_version: SSL3 }',
      ['tls_server_config.min_version: must be one of TLS10, TLS11, TLS12, TLS13'],
    ],
    [
      'basic_auth_users: { alice: secret-pw, "a:b": x }',
      [
        'basic_auth_users.alice: must be a bcrypt hash ($2a$, $2b$ or $2y$), e.g. from htpasswd -nBC 10',
        'basic_auth_users.a:b: a user name has no colon',
      ],
    ],
    [
      'http_server_config: { headers: { X-Powered-By: me, X-Content-Type-Options: sniff }, http2: yes }',
      [
        'http_server_config.http2: must be true or false',
        'http_server_config.headers.X-Powered-By: not a header the format sets (Content-Security-Policy, X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, Strict-Transport-Security)',
        'http_server_config.headers.X-Content-Type-Options: must be one of nosniff',
      ],
    ],
    ['[1, 2]', ['(root): must be a mapping']],
  ])('%s', (yaml, expected) => {
    expect(problemsOf(yaml)).toEqual(expected);
  });

  it('refuses an unreadable or non-YAML file, and echoes no secret', () => {
    expect(readWebConfig(join(dir, 'absent.yml'))).toEqual({
      ok: false,
      problems: [{ path: '(file)', message: 'cannot read: no such file or directory' }],
    });
    writeFileSync(join(dir, 'bad.yml'), 'basic_auth_users: [');
    expect(readWebConfig(join(dir, 'bad.yml'))).toMatchObject({
      problems: [{ path: '(file)', message: 'not valid YAML' }],
    });
    expect(JSON.stringify(problemsOf('basic_auth_users: { alice: secret-pw }'))).not.toContain(
      'secret-pw',
    );
  });
});
