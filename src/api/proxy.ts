/**
 * An environment's egress proxy (docs/configuration.md, "Egress proxy"): which requests go through
 * it (`no_proxy`), and what is sent to it. Prometheus's common HTTP configuration gives the names
 * and their meaning; this module holds the rules that need no socket.
 *
 * - An `http` target is requested from the proxy in absolute form (`GET http://host/path`), with
 *   `Proxy-Authorization` when the proxy URL carries credentials.
 * - An `https` target goes through a `CONNECT host:port` tunnel (`tunnel.ts`), which carries
 *   `Proxy-Authorization` and the `proxy_connect_header` headers; TLS runs inside it, end to end
 *   with the partner.
 */
import { BlockList, isIP } from 'node:net';
import type { ProxySettings } from '../kernel/api.js';

export type { ProxySettings } from '../kernel/api.js';

/** Where a target's connections go when the proxy applies to it. */
export interface ProxyRoute {
  /** The proxy's origin (`http://host:port`). */
  origin: string;
  /** The proxy's host (IPv6 without brackets) and port. */
  host: string;
  port: number;
  /** `Basic …` for `Proxy-Authorization`, or null without credentials. */
  authorization: string | null;
  connectHeaders: Readonly<Record<string, readonly string[]>>;
}

const DEFAULT_PROXY_PORT = 80;

/**
 * The route of requests to `targetUrl`: through the proxy, or null when there is no proxy or
 * `no_proxy` exempts the target's host. Unlike Go's `httpproxy`, loopback addresses and
 * `localhost` are not exempted implicitly: what the file says is what happens.
 */
export function proxyRouteFor(
  settings: ProxySettings | undefined,
  targetUrl: string,
): ProxyRoute | null {
  if (settings === undefined) return null;
  const target = new URL(targetUrl);
  const port = target.port === '' ? (target.protocol === 'https:' ? 443 : 80) : Number(target.port);
  if (bypassesProxy(settings.noProxy, unbracket(target.hostname), port)) return null;
  const proxy = new URL(settings.url);
  return {
    origin: proxy.origin,
    host: unbracket(proxy.hostname),
    port: proxy.port === '' ? DEFAULT_PROXY_PORT : Number(proxy.port),
    authorization: basicAuthorization(settings),
    connectHeaders: settings.connectHeaders,
  };
}

/** `Basic base64(user:password)`, or null when the proxy URL names no user. */
function basicAuthorization(settings: ProxySettings): string | null {
  if (settings.username === undefined || settings.username === '') return null;
  const pair = `${settings.username}:${settings.password ?? ''}`;
  return `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
}

/**
 * Whether one of the `no_proxy` entries covers `host` (a name or an IP address) at `port`:
 * `*` covers all; an IP address or a CIDR block covers addresses in it; a name covers itself and
 * its subdomains (`example.com` and `.example.com` both cover `api.example.com`, as in Go). An
 * entry may end in `:port`, and then covers that port only.
 */
export function bypassesProxy(noProxy: readonly string[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return noProxy.some((raw) => {
    const entry = raw.trim().toLowerCase();
    if (entry === '') return false;
    if (entry === '*') return true;
    const { pattern, entryPort } = splitPort(entry);
    if (entryPort !== null && entryPort !== port) return false;
    if (pattern.includes('/')) return inCidr(pattern, name);
    if (isIP(pattern) !== 0) return isIP(name) !== 0 && sameAddress(pattern, name);
    const domain = pattern.replace(/^\*?\./, '');
    return name === domain || name.endsWith(`.${domain}`);
  });
}

/** `host:port` → both; a bare IPv6 address or CIDR block keeps its colons. */
function splitPort(entry: string): { pattern: string; entryPort: number | null } {
  const bracketed = /^\[(.+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) {
    return { pattern: bracketed[1] ?? '', entryPort: portOf(bracketed[2]) };
  }
  const colons = entry.split(':').length - 1;
  if (colons !== 1) return { pattern: entry, entryPort: null };
  const [pattern = '', port] = entry.split(':');
  return { pattern, entryPort: portOf(port) };
}

function portOf(text: string | undefined): number | null {
  return text === undefined || text === '' ? null : Number(text);
}

function inCidr(cidr: string, host: string): boolean {
  const family = isIP(host);
  const [network = '', bits = ''] = cidr.split('/');
  const networkFamily = isIP(network);
  if (family === 0 || networkFamily !== family) return false;
  const list = new BlockList();
  try {
    list.addSubnet(network, Number(bits), family === 4 ? 'ipv4' : 'ipv6');
  } catch {
    return false;
  }
  return list.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

function sameAddress(a: string, b: string): boolean {
  const list = new BlockList();
  list.addAddress(a, isIP(a) === 4 ? 'ipv4' : 'ipv6');
  return list.check(b, isIP(b) === 4 ? 'ipv4' : 'ipv6');
}

function unbracket(host: string): string {
  return host.replace(/^\[|\]$/g, '');
}

/** Whether `entry` is a `no_proxy` entry this module understands (for the configuration). */
export function isNoProxyEntry(entry: string): boolean {
  const trimmed = entry.trim().toLowerCase();
  if (trimmed === '*') return true;
  const { pattern, entryPort } = splitPort(trimmed);
  if (entryPort !== null && !(Number.isInteger(entryPort) && entryPort > 0 && entryPort < 65536)) {
    return false;
  }
  if (pattern.includes('/')) {
    const [network = '', bits = ''] = pattern.split('/');
    const max = isIP(network) === 4 ? 32 : 128;
    return isIP(network) !== 0 && /^\d{1,3}$/.test(bits) && Number(bits) <= max;
  }
  if (isIP(pattern) !== 0) return true;
  return /^(\*?\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/.test(
    pattern,
  );
}
