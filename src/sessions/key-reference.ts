/**
 * How the session ledger records an API key without holding it (docs/architecture.md, "The
 * session ledger"): where the key came from (`api_key_env`'s variable name or `api_key_file`'s
 * path, both already safe to log) and a fingerprint that recognises the key later.
 *
 * The fingerprint is HMAC-SHA256 of the key under a random 128-bit salt kept in the ledger file,
 * truncated to 16 bytes. It does not reveal the key: HMAC-SHA256 is one-way, so the only way back
 * is to guess keys and compare, and the salt makes each ledger's fingerprints its own (no table
 * computed ahead serves). API keys are long random tokens, far beyond guessing; and the ledger
 * file is mode 0600 in the state directory, readable by no one but the monitor's user.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { ApiKeySource } from '../config/secrets.js';

/** A key's source and fingerprint, as a ledger entry records them. */
export interface KeyReference {
  source: { env: string } | { file: string };
  fingerprint: string;
}

/** What a configured environment's new ledger entries record. */
export interface SessionTarget {
  baseUrl: string;
  keySource: ApiKeySource | null;
  apiKey: string | null;
}

const FINGERPRINT_BYTES = 16;

/** A fresh salt for a ledger file that has none. */
export function newSalt(): string {
  return randomBytes(16).toString('base64url');
}

/** The fingerprint of `key` under `salt`: see the module comment for why it is safe to store. */
export function fingerprintKey(salt: string, key: string): string {
  return createHmac('sha256', salt)
    .update(key)
    .digest()
    .subarray(0, FINGERPRINT_BYTES)
    .toString('hex');
}

/** The recorded form of a configured key source. */
export function recordedSource(source: ApiKeySource): KeyReference['source'] {
  return source.kind === 'env' ? { env: source.name } : { file: source.path };
}

/** The configured form of a recorded key source, or null when the record is malformed. */
export function configuredSource(source: KeyReference['source'] | undefined): ApiKeySource | null {
  if (source !== undefined && 'env' in source && typeof source.env === 'string')
    return { kind: 'env', name: source.env };
  if (source !== undefined && 'file' in source && typeof source.file === 'string')
    return { kind: 'file', path: source.file };
  return null;
}
