import type { TransportError, TransportReason } from '../kernel/api.js';
import { PROXY_ERROR_CODES } from './tunnel.js';

export type { TransportError, TransportReason } from '../kernel/api.js';
/**
 * Transport failures of API calls, reduced to a bounded reason. The reason comes from stable
 * codes (undici's `err.code`, Node's system error codes, the error's `name`), never from message
 * text: undici's `docs/api/Errors.md` says to match on `code`, and messages change between
 * releases. Messages are kept only for humans, sanitized (see `sanitizeText`).
 */

/** Code of a call that hit its own `timeoutMs` deadline. */
export const DEADLINE_CODE = 'REQUEST_TIMEOUT';
/** Code of a call whose caller aborted it through its `signal`. */
export const CALLER_ABORT_CODE = 'REQUEST_ABORTED';
/** Code of a `101 Switching Protocols` answer to a request that asked for no upgrade. */
export const UNEXPECTED_UPGRADE_CODE = 'UNEXPECTED_UPGRADE';
/** Code of Node's failed `assert`, which undici uses for states a broken peer can reach. */
const ASSERTION_CODE = 'ERR_ASSERTION';
/** Code when an error carries no usable code at all. */
export const UNKNOWN_CODE = 'UNKNOWN';

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  DEADLINE_CODE,
]);
/** The egress proxy's failures (`tunnel.ts`): they name the proxy, not the partner. */
const PROXY_CODES: ReadonlySet<string> = new Set(PROXY_ERROR_CODES);
const ABORT_CODES = new Set(['UND_ERR_ABORTED', 'ABORT_ERR', CALLER_ABORT_CODE]);

/** The longest message kept; enough for `connect ECONNREFUSED [v6 address]:port`. */
const MAX_MESSAGE_LENGTH = 200;

/**
 * Classifies an error thrown or reported by undici (or Node's net/tls/dns underneath it). The
 * egress proxy's own failures (a `PROXY_*` code) are `proxy_error`; anything else that is neither
 * a timeout nor an abort is a `network_error`: refused, reset, DNS failures, TLS failures, a
 * closed client, an answer that breaks HTTP (an unrequested `101`, `UNEXPECTED_UPGRADE`).
 */
export function classifyTransportError(
  err: unknown,
  redact: (text: string) => string,
): TransportError {
  const code = errorCode(err);
  const name = err instanceof Error ? err.name : '';
  let reason: TransportReason = 'network_error';
  // The proxy's failures first: a proxy that does not answer is not the partner timing out.
  if (PROXY_CODES.has(code)) reason = 'proxy_error';
  else if (TIMEOUT_CODES.has(code) || name === 'TimeoutError') reason = 'timeout';
  else if (ABORT_CODES.has(code) || name === 'AbortError') reason = 'aborted';
  // An assertion's text is the library's source (`false == true`), meaningless to an operator.
  const message =
    code === ASSERTION_CODE
      ? 'the HTTP client rejected a malformed answer'
      : err instanceof Error
        ? err.message
        : String(err);
  return { reason, code, message: sanitizeText(message, redact, MAX_MESSAGE_LENGTH) };
}

/**
 * The code of an error: its own string `code`, else the first code of an `AggregateError`'s parts
 * (Node's happy-eyeballs connect reports one per address tried), else its `name` for DOM-style
 * errors (`TimeoutError`, `AbortError`). Limited to a code-like shape, so nothing else leaks in.
 */
export function errorCode(err: unknown): string {
  if (typeof err !== 'object' || err === null) return UNKNOWN_CODE;
  const own = (err as { code?: unknown }).code;
  if (typeof own === 'string' && isCodeLike(own)) return own;
  const parts = (err as { errors?: unknown }).errors;
  if (Array.isArray(parts)) {
    for (const part of parts) {
      const code = errorCode(part);
      if (code !== UNKNOWN_CODE) return code;
    }
  }
  const cause = (err as { cause?: unknown }).cause;
  if (cause !== undefined && cause !== err) {
    const code = errorCode(cause);
    if (code !== UNKNOWN_CODE) return code;
  }
  const name = (err as { name?: unknown }).name;
  if (typeof name === 'string' && name !== 'Error' && isCodeLike(name)) return name;
  return UNKNOWN_CODE;
}

function isCodeLike(value: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_]{1,63}$/.test(value);
}

/**
 * Makes untrusted or sensitive text safe for a log line: the API key and URL credentials removed,
 * control characters and runs of whitespace collapsed to one space, cut to `maxLength`. Redaction
 * runs before the cut, so a cut cannot leave a recognisable piece of the key behind.
 */
export function sanitizeText(
  text: string,
  redact: (text: string) => string,
  maxLength: number,
): string {
  const cleaned = redact(text)
    .replace(/\/\/[^/\s@]*@/g, '//') // userinfo in URLs
    .replace(/[\s\u0000-\u001f\u007f]+/g, ' ') // eslint-disable-line no-control-regex
    .trim();
  return cleaned.length > maxLength ? `${cleaned.slice(0, maxLength - 1)}…` : cleaned;
}

/** Placeholder that replaces the API key wherever it would otherwise appear. */
export const REDACTED = '[redacted]';

/**
 * A function that removes every occurrence of `secret` from a text. An empty secret redacts
 * nothing (there is nothing to find).
 */
export function redactor(secret: string): (text: string) => string {
  if (secret.length === 0) return (text) => text;
  return (text) => (text.includes(secret) ? text.split(secret).join(REDACTED) : text);
}
