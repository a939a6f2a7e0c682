/**
 * An environment's egress settings (docs/configuration.md, "Egress proxy" and "Client
 * certificates"): the proxy (`proxy_url`, `proxy_password_file`, `no_proxy`,
 * `proxy_from_environment`, `proxy_connect_header`, with Prometheus's meaning) and the client
 * certificate (`client_cert_file`, `client_key_file`). Both are read and checked while the
 * configuration loads, so a wrong file is a problem with its key path, not a failure at the first
 * run. No message quotes a proxy URL (it may hold a password), a password or a key.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { ProxySettings } from '../api/proxy.js';
import { isNoProxyEntry } from '../api/proxy.js';
import type { Issues, Loose } from './rules.js';
import { describeFileError } from './secrets.js';

/** The proxy as loaded, and where it came from (safe to show: no credential). */
export type ResolvedProxy = ProxySettings & { source: string };

/** The client certificate as loaded: absolute paths, PEM texts and the certificate's end. */
export interface ResolvedClientCertificate {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
  /** `notAfter` of the leaf, Unix seconds. */
  notAfter: number;
}

interface FileContext {
  baseDir: string;
  env: NodeJS.ProcessEnv;
  readFile: (path: string) => string;
  /** Wall clock, ms since the epoch (for the expiry test). */
  now: () => number;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** The keys' shapes; the rules that span keys are in `resolveProxy` and `resolveClientCertificate`. */
export const egressShape = {
  proxy_url: z.string().min(1).optional(),
  proxy_password_file: z.string().min(1).optional(),
  no_proxy: z
    .string()
    .refine(
      (text) => text.split(',').every((entry) => entry.trim() === '' || isNoProxyEntry(entry)),
      {
        error:
          'must be a comma-separated list of host names, .domains, IP addresses, CIDR blocks (each with an optional :port) or *',
      },
    )
    .optional(),
  proxy_from_environment: z.boolean().optional(),
  proxy_connect_header: z
    .record(
      z.string().regex(HEADER_NAME, { error: 'must be an HTTP header name' }),
      z.array(
        z.string().regex(HEADER_VALUE, {
          error: 'must be a header value without line breaks or control characters',
        }),
      ),
    )
    .optional(),
  client_cert_file: z.string().min(1).optional(),
  client_key_file: z.string().min(1).optional(),
};

/** Reads the proxy settings, reporting every problem with its key path; undefined without a proxy. */
export function resolveProxy(
  v: Loose,
  issues: Issues,
  ctx: FileContext,
): ResolvedProxy | undefined {
  const fromEnvironment = v['proxy_from_environment'] === true;
  const url = v['proxy_url'];
  const problem = (key: string, message: string): undefined => {
    issues.addIssue({ code: 'custom', path: [key], message });
    return undefined;
  };
  if (fromEnvironment && url !== undefined) {
    return problem(
      'proxy_from_environment',
      'set only one of proxy_url and proxy_from_environment',
    );
  }
  if (v['no_proxy'] !== undefined && url === undefined) {
    problem('no_proxy', 'needs proxy_url (with proxy_from_environment, NO_PROXY applies)');
  }
  if (v['proxy_connect_header'] !== undefined && url === undefined && !fromEnvironment) {
    problem('proxy_connect_header', 'needs proxy_url or proxy_from_environment');
  }
  if (v['proxy_password_file'] !== undefined && url === undefined) {
    problem('proxy_password_file', 'needs proxy_url with a user name (http://user@host:port)');
  }
  const headers = (v['proxy_connect_header'] ?? {}) as Record<string, string[]>;
  if (fromEnvironment) return proxyFromEnvironment(v, headers, ctx, problem);
  if (typeof url !== 'string') return undefined;
  const parsed = parseProxyUrl(url);
  if (parsed === null) {
    return problem(
      'proxy_url',
      'must be an http:// URL of a proxy: http://[user:password@]host:port',
    );
  }
  const password = passwordOf(v, parsed, ctx, problem);
  if (password === null) return undefined;
  const noProxy = typeof v['no_proxy'] === 'string' ? splitNoProxy(v['no_proxy']) : [];
  return {
    ...parsed,
    ...(password === undefined ? {} : { password }),
    noProxy,
    connectHeaders: headers,
    source: 'proxy_url',
  };
}

/** `HTTPS_PROXY` (or `HTTP_PROXY` for an `http` base URL) and `NO_PROXY`, upper case first, as Go. */
function proxyFromEnvironment(
  v: Loose,
  headers: Record<string, string[]>,
  ctx: FileContext,
  problem: (key: string, message: string) => undefined,
): ResolvedProxy | undefined {
  const https = typeof v['base_url'] === 'string' && v['base_url'].startsWith('https:');
  const name = https ? 'HTTPS_PROXY' : 'HTTP_PROXY';
  const chosen = [name, name.toLowerCase()].find((n) => (ctx.env[n] ?? '') !== '');
  if (chosen === undefined) return undefined;
  const raw = ctx.env[chosen] ?? '';
  const parsed = parseProxyUrl(raw.includes('://') ? raw : `http://${raw}`);
  if (parsed === null) {
    return problem('proxy_from_environment', `${chosen} is not an http:// URL of a proxy`);
  }
  const noProxy = ctx.env['NO_PROXY'] ?? ctx.env['no_proxy'] ?? '';
  return { ...parsed, noProxy: splitNoProxy(noProxy), connectHeaders: headers, source: chosen };
}

/** The proxy's origin and credentials, or null when the text is not an `http` proxy URL. */
export function parseProxyUrl(
  text: string,
): { url: string; username?: string; password?: string } | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' || url.hostname === '' || url.search !== '' || url.hash !== '') {
    return null;
  }
  if (url.pathname !== '/' && url.pathname !== '') return null;
  const username = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return {
    url: url.origin,
    ...(username === '' ? {} : { username }),
    ...(password === '' ? {} : { password }),
  };
}

/**
 * The proxy password: from the URL, or from `proxy_password_file` (one line, trimmed). Undefined
 * without one; null when a problem was reported.
 */
function passwordOf(
  v: Loose,
  parsed: { username?: string; password?: string },
  ctx: FileContext,
  problem: (key: string, message: string) => undefined,
): string | undefined | null {
  const file = v['proxy_password_file'];
  if (typeof file !== 'string') return parsed.password;
  if (parsed.username === undefined) {
    problem('proxy_password_file', 'needs a user name in proxy_url (http://user@host:port)');
    return null;
  }
  if (parsed.password !== undefined) {
    problem(
      'proxy_password_file',
      'set the proxy password in proxy_url or in proxy_password_file, not both',
    );
    return null;
  }
  const path = resolve(ctx.baseDir, file);
  let text: string;
  try {
    text = ctx.readFile(path);
  } catch (err) {
    problem('proxy_password_file', `cannot read ${path}: ${describeFileError(err)}`);
    return null;
  }
  const password = text.trim();
  // eslint-disable-next-line no-control-regex
  if (password === '' || /[\u0000-\u001f\u007f]/.test(password)) {
    problem('proxy_password_file', `file ${path} must hold the password on one line`);
    return null;
  }
  return password;
}

function splitNoProxy(text: string): string[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/**
 * Reads `client_cert_file` and `client_key_file` (both or neither): each must be readable, the
 * certificate must parse and not have expired, and the key must be the certificate's.
 */
export function resolveClientCertificate(
  v: Loose,
  issues: Issues,
  ctx: FileContext,
): ResolvedClientCertificate | undefined {
  const certSetting = v['client_cert_file'];
  const keySetting = v['client_key_file'];
  const problem = (key: string, message: string): undefined => {
    issues.addIssue({ code: 'custom', path: [key], message });
    return undefined;
  };
  if (certSetting === undefined && keySetting === undefined) return undefined;
  if (keySetting === undefined)
    return problem('client_key_file', 'is required with client_cert_file');
  if (certSetting === undefined)
    return problem('client_cert_file', 'is required with client_key_file');
  if (typeof certSetting !== 'string' || typeof keySetting !== 'string') return undefined;
  const certFile = resolve(ctx.baseDir, certSetting);
  const keyFile = resolve(ctx.baseDir, keySetting);
  const certificate = readClientCertificate(certFile, ctx, (m) => problem('client_cert_file', m));
  const key = readPrivateKey(keyFile, ctx, (m) => problem('client_key_file', m));
  if (certificate === undefined || key === undefined) return undefined;
  if (!certificate.x509.checkPrivateKey(key.object)) {
    return problem(
      'client_key_file',
      `the key in ${keyFile} does not match the certificate in ${certFile}`,
    );
  }
  const notAfter = Date.parse(certificate.x509.validTo) / 1000;
  if (notAfter * 1000 <= ctx.now()) {
    const day = new Date(notAfter * 1000).toISOString();
    return problem('client_cert_file', `the certificate in ${certFile} expired on ${day}`);
  }
  return { certFile, keyFile, cert: certificate.pem, key: key.pem, notAfter };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/;

function readClientCertificate(
  path: string,
  ctx: FileContext,
  problem: (message: string) => undefined,
): { pem: string; x509: X509Certificate } | undefined {
  let text: string;
  try {
    text = ctx.readFile(path);
  } catch (err) {
    return problem(`cannot read ${path}: ${describeFileError(err)}`);
  }
  const first = PEM_CERTIFICATE.exec(text)?.[0];
  if (first === undefined) {
    return problem(`file ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  try {
    return { pem: text, x509: new X509Certificate(first) };
  } catch {
    return problem(`file ${path}: the first certificate is not a valid X.509 certificate`);
  }
}

function readPrivateKey(
  path: string,
  ctx: FileContext,
  problem: (message: string) => undefined,
): { pem: string; object: ReturnType<typeof createPrivateKey> } | undefined {
  let text: string;
  try {
    text = ctx.readFile(path);
  } catch (err) {
    return problem(`cannot read ${path}: ${describeFileError(err)}`);
  }
  try {
    return { pem: text, object: createPrivateKey(text) };
  } catch {
    // The file's content is a secret: the message names the file only.
    return problem(`file ${path} holds no unencrypted PEM private key`);
  }
}
