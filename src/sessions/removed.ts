/**
 * Closes, at start-up, the sessions the ledger holds for environments no longer configured
 * (docs/configuration.md, "Reload"): a reload removed the environment with sessions open, and the
 * process died before its own sweep closed them. No runtime exists for such an environment, so
 * each is closed with the base URL its entry recorded and a short-lived client of its own, with
 * the key found again from the entry's key reference (`key-reference.ts`).
 *
 * What cannot be closed (no recorded address, no key that matches the fingerprint, a failed close)
 * stays listed: `isa_synthetic_sessions_open` keeps counting it under the removed environment's
 * name, and `IsaSyntheticSessionsLeaking` tickets it (docs/runbooks.md).
 */
import { ApiClient } from '../api/client.js';
import { closeSession } from '../api/sessions.js';
import { readBoundedText } from '../config/files.js';
import { MAX_API_KEY_LENGTH, resolveApiKey } from '../config/secrets.js';
import type { CheckLogger } from '../kernel/check.js';
import { configuredSource } from './key-reference.js';
import type { LedgerEntry, SessionLedger } from './ledger.js';
import { confirmsClose } from './tokens.js';

/** One close's timeout: the conservative end of a request timeout (docs/configuration.md). */
export const REMOVED_CLOSE_TIMEOUT_MS = 5_000;

export interface RemovedSessionsOptions {
  ledger: SessionLedger;
  /** The configured environments' names and keys (a key of theirs may be the one recorded). */
  configured: ReadonlyArray<{ name: string; apiKey: string | null }>;
  userAgent: string;
  log: CheckLogger;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Closes what it can of the removed environments' sessions; never throws. */
export async function closeRemovedSessions(opts: RemovedSessionsOptions): Promise<void> {
  const names = new Set(opts.configured.map((env) => env.name));
  const byEnvironment = new Map<string, LedgerEntry[]>();
  for (const entry of opts.ledger.list()) {
    if (names.has(entry.environment)) continue;
    byEnvironment.set(entry.environment, [...(byEnvironment.get(entry.environment) ?? []), entry]);
  }
  for (const [environment, entries] of byEnvironment) {
    if (opts.signal?.aborted) return;
    await closeEnvironment(environment, entries, opts).catch((err: unknown) =>
      opts.log.warn({ environment, err }, 'closing sessions of a removed environment failed'),
    );
  }
}

/**
 * Closes one removed environment's sessions, one DELETE at a time with one short-lived client per
 * recorded address and key. A 429 or a Retry-After stops them: the API asked for quiet, and the
 * rest stays listed (counted) for the next start.
 */
async function closeEnvironment(
  environment: string,
  entries: LedgerEntry[],
  opts: RemovedSessionsOptions,
): Promise<void> {
  const clients = new Map<string, ApiClient>();
  let closed = 0;
  try {
    for (const entry of entries) {
      const apiKey = keyOf(entry, opts);
      if (opts.signal?.aborted) break;
      if (entry.baseUrl === undefined || apiKey === null) continue;
      const at = `${entry.baseUrl}\n${entry.key?.fingerprint ?? ''}`;
      const client =
        clients.get(at) ??
        new ApiClient({ baseUrl: entry.baseUrl, apiKey, userAgent: opts.userAgent });
      clients.set(at, client);
      const outcome = await closeOne(client, entry, opts);
      if (outcome === 'closed') closed++;
      if (outcome === 'quiet') break;
    }
  } finally {
    await Promise.all([...clients.values()].map((client) => client.close()));
  }
  reportEnvironment(environment, closed, opts);
}

/** One line for what was closed, one for what is left (naming the environment, never a key). */
function reportEnvironment(
  environment: string,
  closed: number,
  opts: RemovedSessionsOptions,
): void {
  const open = opts.ledger.count(environment);
  if (closed > 0)
    opts.log.info({ environment, sessions: closed }, 'closed sessions of a removed environment');
  if (open > 0) {
    opts.log.warn(
      { environment, sessions: open },
      'sessions of an environment no longer configured are still open (no recorded address and matching key, or the close failed); isa_synthetic_sessions_open counts them',
    );
  }
}

/** The entry's key: its recorded source's if it still matches, else a configured one's that does. */
function keyOf(entry: LedgerEntry, opts: RemovedSessionsOptions): string | null {
  const fingerprint = entry.key?.fingerprint;
  if (typeof fingerprint !== 'string') return null;
  const source = configuredSource(entry.key?.source);
  if (source !== null) {
    const read = (path: string) => readBoundedText(path, MAX_API_KEY_LENGTH + 64);
    const resolution = resolveApiKey(source, opts.env ?? process.env, read);
    if (resolution.ok && opts.ledger.keyMatches(resolution.apiKey, fingerprint))
      return resolution.apiKey;
  }
  const configured = opts.configured.find(
    (env) => env.apiKey !== null && opts.ledger.keyMatches(env.apiKey, fingerprint),
  );
  return configured?.apiKey ?? null;
}

/** One DELETE; the entry leaves the ledger once the API confirmed the close. */
async function closeOne(
  client: ApiClient,
  entry: LedgerEntry,
  opts: RemovedSessionsOptions,
): Promise<'closed' | 'open' | 'quiet'> {
  const response = await closeSession(client, entry.token, {
    timeoutMs: opts.timeoutMs ?? REMOVED_CLOSE_TIMEOUT_MS,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  if (confirmsClose(response)) {
    await opts.ledger.remove(entry.environment, entry.token);
    return 'closed';
  }
  return response.statusCode === 429 || response.retryAfterMs !== null ? 'quiet' : 'open';
}
