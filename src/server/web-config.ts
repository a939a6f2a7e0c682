/**
 * The web configuration file of `isa-monitor run --web.config.file FILE` (docs/deploy.md, "TLS
 * and basic auth"): the exporter-toolkit format every Prometheus exporter reads, so Prometheus
 * scrapes the monitor with the `tls_config` and `basic_auth` it uses for any other target. Read
 * whole and checked whole: every problem is reported at once with its key path, and a key the
 * format has but this server does not implement is refused by name rather than ignored.
 */
import { createSecureContext, type SecureVersion, type TlsOptions } from 'node:tls';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { readBoundedText } from '../config/files.js';
import type { ConfigProblem } from '../config/problems.js';
import { suggestKey } from '../config/problems.js';
import { describeFileError } from '../config/secrets.js';

/** Largest web configuration, certificate or key file read. */
const MAX_FILE_BYTES = 1024 * 1024;

export const CLIENT_AUTH_TYPES = [
  'NoClientCert',
  'RequestClientCert',
  'RequireAnyClientCert',
  'VerifyClientCertIfGiven',
  'RequireAndVerifyClientCert',
] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];

const TLS_VERSIONS: Readonly<Record<string, SecureVersion>> = {
  TLS10: 'TLSv1',
  TLS11: 'TLSv1.1',
  TLS12: 'TLSv1.2',
  TLS13: 'TLSv1.3',
};

/** The response headers the format allows, with the values it accepts (null: any text). */
const HEADER_VALUES: Readonly<Record<string, readonly string[] | null>> = {
  'Content-Security-Policy': null,
  'X-Frame-Options': ['deny', 'sameorigin'],
  'X-Content-Type-Options': ['nosniff'],
  'X-XSS-Protection': null,
  'Strict-Transport-Security': null,
};

const TOP_KEYS = ['tls_server_config', 'http_server_config', 'basic_auth_users'];
const TLS_KEYS = [
  'cert_file',
  'key_file',
  'client_auth_type',
  'client_ca_file',
  'min_version',
  'max_version',
];
const HTTP_KEYS = ['headers', 'http2'];
/** Keys of the exporter-toolkit format this server does not implement: refused by name. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  rate_limit: 'the listener has its own limits (docs/deploy.md, "Listener limits")',
  'tls_server_config.cert': 'give the certificate as cert_file',
  'tls_server_config.key': 'give the key as key_file',
  'tls_server_config.client_ca': 'give the client CA as client_ca_file',
  'tls_server_config.client_allowed_sans': 'restrict clients by their CA instead',
  'tls_server_config.cipher_suites': "Node's default cipher suites are used",
  'tls_server_config.prefer_server_cipher_suites': "Node's default cipher suites are used",
  'tls_server_config.curve_preferences': "Node's default curves are used",
};

/** bcrypt's modular crypt format: `$2a$`, `$2b$` or `$2y$`, a two-digit cost, salt and hash. */
const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

export interface WebTlsSettings {
  certFile: string;
  keyFile: string;
  clientAuthType: ClientAuthType;
  clientCaFile: string | null;
  minVersion: SecureVersion;
  maxVersion: SecureVersion;
}

/** A checked web configuration with the TLS material it names, read at the same moment. */
export interface WebConfig {
  serverTls: WebTlsSettings | null;
  /** The server's TLS options with the material read, when `serverTls` is set. */
  tlsOptions: TlsOptions | null;
  /** User name → bcrypt hash; empty: no authentication. */
  users: ReadonlyMap<string, string>;
  headers: Readonly<Record<string, string>>;
}

export type WebConfigResult =
  { ok: true; config: WebConfig } | { ok: false; problems: ConfigProblem[] };

/** Reads and checks the web configuration `file`; relative paths in it are from its folder. */
export function readWebConfig(file: string): WebConfigResult {
  let text: string;
  try {
    text = readBoundedText(file, MAX_FILE_BYTES);
  } catch (err) {
    return {
      ok: false,
      problems: [{ path: '(file)', message: `cannot read: ${describeFileError(err)}` }],
    };
  }
  let doc: unknown;
  try {
    doc = parse(text) ?? {};
  } catch {
    return { ok: false, problems: [{ path: '(file)', message: 'not valid YAML' }] };
  }
  return checkWebConfig(doc, dirname(resolve(file)));
}

/** Checks a parsed web configuration document; `base` is the folder relative paths start from. */
export function checkWebConfig(doc: unknown, base: string): WebConfigResult {
  const problems: ConfigProblem[] = [];
  const root = mapping(doc, '(root)', problems) ?? {};
  checkKeys(root, '', TOP_KEYS, problems);
  const tls = tlsSettings(root['tls_server_config'], base, problems);
  const users = basicAuthUsers(root['basic_auth_users'], problems);
  const http = mapping(root['http_server_config'] ?? {}, 'http_server_config', problems) ?? {};
  checkKeys(http, 'http_server_config.', HTTP_KEYS, problems);
  if (http['http2'] !== undefined && typeof http['http2'] !== 'boolean') {
    problems.push({ path: 'http_server_config.http2', message: 'must be true or false' });
  }
  const headers = responseHeaders(http['headers'], problems);
  const tlsOptions = tls === null ? null : loadTlsOptions(tls, problems);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, config: { serverTls: tls, tlsOptions, users, headers } };
}

function mapping(
  value: unknown,
  path: string,
  problems: ConfigProblem[],
): Record<string, unknown> | null {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return value as Record<string, unknown>;
  }
  problems.push({ path, message: 'must be a mapping' });
  return null;
}

function checkKeys(
  section: Record<string, unknown>,
  prefix: string,
  known: readonly string[],
  problems: ConfigProblem[],
): void {
  for (const key of Object.keys(section)) {
    if (known.includes(key)) continue;
    const path = `${prefix}${key}`;
    const unsupported = UNSUPPORTED[path];
    if (unsupported !== undefined) {
      problems.push({ path, message: `not supported by isa-monitor: ${unsupported}` });
      continue;
    }
    const suggestion = suggestKey(key, known);
    problems.push({
      path,
      message: `unknown key${suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`}`,
    });
  }
}

function tlsSettings(
  value: unknown,
  base: string,
  problems: ConfigProblem[],
): WebTlsSettings | null {
  if (value === undefined || value === null) return null;
  const section = mapping(value, 'tls_server_config', problems);
  if (section === null) return null;
  checkKeys(section, 'tls_server_config.', TLS_KEYS, problems);
  const path = (key: string): string => `tls_server_config.${key}`;
  const file = (key: string, required: boolean): string | null => {
    const raw = section[key];
    if (raw === undefined && !required) return null;
    if (typeof raw !== 'string' || raw === '') {
      problems.push({ path: path(key), message: 'required: a file name' });
      return null;
    }
    return resolve(base, raw);
  };
  const certFile = file('cert_file', true);
  const keyFile = file('key_file', true);
  const clientCaFile = file('client_ca_file', false);
  const clientAuthType = oneOf(section, 'client_auth_type', CLIENT_AUTH_TYPES, problems);
  const verifies =
    clientAuthType === 'VerifyClientCertIfGiven' || clientAuthType === 'RequireAndVerifyClientCert';
  if (verifies && section['client_ca_file'] === undefined) {
    problems.push({ path: path('client_ca_file'), message: `required by ${clientAuthType}` });
  }
  if (clientCaFile !== null && clientAuthType === 'NoClientCert') {
    problems.push({
      path: path('client_auth_type'),
      message: 'client_ca_file is set but client_auth_type is NoClientCert',
    });
  }
  const minVersion = tlsVersion(section, 'min_version', 'TLS12', problems);
  const maxVersion = tlsVersion(section, 'max_version', 'TLS13', problems);
  if (certFile === null || keyFile === null || clientAuthType === null) return null;
  if (minVersion === null || maxVersion === null) return null;
  if (minVersion > maxVersion) {
    problems.push({ path: path('min_version'), message: 'is above max_version' });
    return null;
  }
  return { certFile, keyFile, clientAuthType, clientCaFile, minVersion, maxVersion };
}

function oneOf<T extends string>(
  section: Record<string, unknown>,
  key: string,
  values: readonly T[],
  problems: ConfigProblem[],
): T | null {
  const raw = section[key] ?? values[0];
  if (typeof raw === 'string' && (values as readonly string[]).includes(raw)) return raw as T;
  problems.push({
    path: `tls_server_config.${key}`,
    message: `must be one of ${values.join(', ')}`,
  });
  return null;
}

function tlsVersion(
  section: Record<string, unknown>,
  key: string,
  fallback: string,
  problems: ConfigProblem[],
): SecureVersion | null {
  const raw = section[key] ?? fallback;
  const version = typeof raw === 'string' ? TLS_VERSIONS[raw] : undefined;
  if (version !== undefined) return version;
  problems.push({
    path: `tls_server_config.${key}`,
    message: `must be one of ${Object.keys(TLS_VERSIONS).join(', ')}`,
  });
  return null;
}

function basicAuthUsers(value: unknown, problems: ConfigProblem[]): Map<string, string> {
  const users = new Map<string, string>();
  if (value === undefined || value === null) return users;
  const section = mapping(value, 'basic_auth_users', problems);
  for (const [user, hash] of Object.entries(section ?? {})) {
    // The hash is not echoed: a problem line names the user only.
    if (user.includes(':') || user === '') {
      problems.push({ path: `basic_auth_users.${user}`, message: 'a user name has no colon' });
    } else if (typeof hash !== 'string' || !BCRYPT_HASH.test(hash)) {
      problems.push({
        path: `basic_auth_users.${user}`,
        message: 'must be a bcrypt hash ($2a$, $2b$ or $2y$), e.g. from htpasswd -nBC 10',
      });
    } else {
      users.set(user, hash);
    }
  }
  return users;
}

function responseHeaders(value: unknown, problems: ConfigProblem[]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (value === undefined || value === null) return headers;
  const section = mapping(value, 'http_server_config.headers', problems);
  for (const [name, raw] of Object.entries(section ?? {})) {
    const path = `http_server_config.headers.${name}`;
    const allowed = HEADER_VALUES[name];
    if (allowed === undefined) {
      problems.push({
        path,
        message: `not a header the format sets (${Object.keys(HEADER_VALUES).join(', ')})`,
      });
    } else if (typeof raw !== 'string') {
      problems.push({ path, message: 'must be a string' });
    } else if (allowed !== null && raw !== '' && !allowed.includes(raw.toLowerCase())) {
      problems.push({ path, message: `must be one of ${allowed.join(', ')}` });
    } else if (raw !== '') {
      // Blank means "unset", as in exporter-toolkit.
      headers[name] = raw;
    }
  }
  return headers;
}

/** Reads the certificate, key and client CA, and checks they make a working TLS context. */
function loadTlsOptions(settings: WebTlsSettings, problems: ConfigProblem[]): TlsOptions | null {
  const read = (key: string, file: string): string | null => {
    try {
      return readBoundedText(file, MAX_FILE_BYTES);
    } catch (err) {
      problems.push({
        path: `tls_server_config.${key}`,
        message: `cannot read: ${describeFileError(err)}`,
      });
      return null;
    }
  };
  const cert = read('cert_file', settings.certFile);
  const key = read('key_file', settings.keyFile);
  const ca =
    settings.clientCaFile === null ? undefined : read('client_ca_file', settings.clientCaFile);
  if (cert === null || key === null || ca === null) return null;
  const options: TlsOptions = {
    cert,
    key,
    ...(ca === undefined ? {} : { ca }),
    minVersion: settings.minVersion,
    maxVersion: settings.maxVersion,
    // Which certificates a client must show (Go's ClientAuthType): a missing one for the two
    // "Require" kinds, and an unverified one for VerifyClientCertIfGiven, are refused once the
    // handshake is done (front-door.ts).
    requestCert: settings.clientAuthType !== 'NoClientCert',
    rejectUnauthorized: settings.clientAuthType === 'RequireAndVerifyClientCert',
  };
  try {
    createSecureContext(options);
    return options;
  } catch (err) {
    problems.push({ path: 'tls_server_config.key_file', message: describeTlsError(err) });
    return null;
  }
}

/** OpenSSL's complaint as a short phrase; its message is not passed on (it may quote a path). */
function describeTlsError(err: unknown): string {
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  if (code.includes('KEY_VALUES_MISMATCH')) return 'does not match the certificate of cert_file';
  if (code.includes('PEM') || code.includes('NO_START_LINE') || code.includes('BAD_BASE64')) {
    return 'cert_file, key_file or client_ca_file is not PEM';
  }
  return `the certificate and key do not make a TLS context (${code || 'unknown error'})`;
}
