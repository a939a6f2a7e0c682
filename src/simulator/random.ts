/**
 * Deterministic randomness for the simulator. Catalogs, analytics seeds and the qualify outcome of
 * an ordinary address come from hashes of stable inputs, so the same address or API key gives the
 * same answers in every run and partners can write tests against them.
 */
import { createHash, randomBytes } from 'node:crypto';

/** An unsigned 32-bit hash of a string (first 4 bytes of its SHA-256). */
export function hash32(input: string): number {
  return createHash('sha256').update(input).digest().readUInt32BE(0);
}

/** A small seeded PRNG (mulberry32): fast, good enough for fixtures, reproducible from a seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [min, max] drawn from `random`. */
export function randomInt(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** One element of a non-empty list drawn from `random`. */
export function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

/** A version-4-shaped UUID derived from a name, so fixture ids stay stable across runs. */
export function stableUuid(name: string): string {
  const bytes = createHash('sha256').update(name).digest().subarray(0, 16);
  return formatUuid(bytes);
}

/** A random version-4 UUID drawn from a seeded PRNG (stable for a given seed sequence). */
export function seededUuid(random: () => number): string {
  const bytes = Buffer.alloc(16);
  for (let i = 0; i < 16; i++) bytes[i] = Math.floor(random() * 256);
  return formatUuid(bytes);
}

function formatUuid(bytes: Buffer): string {
  const b = Buffer.from(bytes);
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40; // version 4
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80; // RFC 4122 variant
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A fresh session token: 24 URL-safe characters, unguessable. */
export function newSessionToken(): string {
  return randomBytes(18).toString('base64url');
}

/** The shape of every token `newSessionToken` issues; anything else is an invalid token (400). */
export const SESSION_TOKEN_PATTERN = /^[A-Za-z0-9_-]{24}$/;
