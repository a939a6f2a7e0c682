/**
 * Basic authentication against the bcrypt hashes of the web configuration (docs/deploy.md, "TLS
 * and basic auth"). bcrypt is slow on purpose (about 70 ms at cost 10), and Prometheus sends the
 * same credentials with every scrape, so a successful check is remembered, as exporter-toolkit
 * does. What is remembered is an HMAC of user, hash and password under a key made at start and
 * never stored: the password itself is kept nowhere, and a changed hash in the file no longer
 * matches what was remembered.
 */
import { createHmac, randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';

/** How many successful checks are remembered (a few users, a few Prometheus replicas). */
const REMEMBERED = 64;
/**
 * Compared against when the user is unknown, so an unknown name takes as long as a wrong
 * password and the answer's timing does not tell which names exist. Cost 10, of the password
 * "unused".
 */
const UNKNOWN_USER_HASH = '$2b$10$QsFcIc/7eVFveCij10/Xo.tzIdDX1HMRU7bKJ9WbCLgyH/lTtITU.';

export class BasicAuthVerifier {
  private readonly key = randomBytes(32);
  private readonly remembered = new Set<string>();
  /** bcrypt runs one at a time: a flood of wrong passwords costs one core at most, not all. */
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * Whether the `Authorization` header carries a user of `users` with the right password.
   * `users` maps user names to bcrypt hashes; empty means no authentication is asked for.
   */
  async verify(users: ReadonlyMap<string, string>, header: string | undefined): Promise<boolean> {
    if (users.size === 0) return true;
    const credentials = parseBasic(header);
    if (credentials === null) return false;
    const hash = users.get(credentials.user);
    const token = this.token(credentials.user, hash ?? '', credentials.password);
    if (hash !== undefined && this.remembered.has(token)) return true;
    const matches = await this.compare(credentials.password, hash ?? UNKNOWN_USER_HASH);
    if (!matches || hash === undefined) return false;
    if (this.remembered.size >= REMEMBERED) {
      // The oldest goes first: a Set iterates in insertion order.
      const oldest = this.remembered.values().next().value;
      if (oldest !== undefined) this.remembered.delete(oldest);
    }
    this.remembered.add(token);
    return true;
  }

  private compare(password: string, hash: string): Promise<boolean> {
    const result = this.queue.then(() => bcrypt.compare(password, hash));
    this.queue = result.catch(() => false);
    return result.catch(() => false);
  }

  private token(user: string, hash: string, password: string): string {
    return createHmac('sha256', this.key).update(`${user}\0${hash}\0${password}`).digest('base64');
  }
}

/** The user and password of a `Basic` Authorization header, or null when it is not one. */
export function parseBasic(header: string | undefined): { user: string; password: string } | null {
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header ?? '');
  if (match === null || match[1] === undefined) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
