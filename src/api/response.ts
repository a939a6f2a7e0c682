/**
 * Decoding of API responses: header flattening, JSON body decoding with a bounded diagnostic
 * snippet, `Retry-After` and the API's `request_id`. Pure functions; `client.ts` applies them.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { errorEnvelopeSchema } from './schemas.js';
import { sanitizeText } from './transport-errors.js';
import { RESPONSE_PARSE } from './validate.js';
import type { BodyError } from '../kernel/api.js';

export type { BodyError } from '../kernel/api.js';

export interface DecodedBody {
  body: unknown;
  bodyError: BodyError | null;
  bodySnippet: string | null;
}

/** Longest body snippet kept for logs. */
export const MAX_SNIPPET_LENGTH = 200;

/**
 * Response headers as lower-cased names with one string value each; repeated headers are joined
 * with `, ` as HTTP allows for list-valued fields.
 */
export function flattenHeaders(
  headers: IncomingHttpHeaders,
  redact: (text: string) => string,
): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const joined = Array.isArray(value) ? value.join(', ') : value;
    flat[name.toLowerCase()] = redact(joined);
  }
  return flat;
}

/** True for `application/json`, `application/problem+json` and other `+json` media types. */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const mediaType = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return mediaType === 'application/json' || /^[a-z0-9.+-]+\/[a-z0-9.+-]*\+json$/.test(mediaType);
}

/**
 * Decodes a complete response body. JSON media types are parsed; an empty body is no body (a
 * `204`, or a `DELETE` answered without content), not an error. Anything else gets a `bodyError`
 * and a short sanitized snippet so a log line shows what came back (an HTML error page, a proxy's
 * text). `redactBody` is applied to the text before parsing so a server that echoes the
 * credential cannot make the client return it.
 */
export function decodeBody(
  raw: Buffer,
  contentType: string | undefined,
  redact: (text: string) => string,
  redactBody: (text: string) => string,
): DecodedBody {
  if (raw.length === 0) return { body: undefined, bodyError: null, bodySnippet: null };
  const text = raw.toString('utf8');
  if (!isJsonContentType(contentType)) {
    return { body: undefined, bodyError: 'not_json', bodySnippet: snippet(text, redact) };
  }
  try {
    return { body: JSON.parse(redactBody(text)) as unknown, bodyError: null, bodySnippet: null };
  } catch {
    return { body: undefined, bodyError: 'invalid_json', bodySnippet: snippet(text, redact) };
  }
}

/** The result for a body that exceeded the size cap; only its beginning was kept. */
export function tooLargeBody(head: Buffer, redact: (text: string) => string): DecodedBody {
  return {
    body: undefined,
    bodyError: 'too_large',
    bodySnippet: snippet(head.toString('utf8'), redact),
  };
}

/** A short, single-line, credential-free excerpt of a body for logs. */
export function snippet(text: string, redact: (text: string) => string): string {
  return sanitizeText(text, redact, MAX_SNIPPET_LENGTH);
}

/** Longest API error message kept in a step record. */
export const MAX_ERROR_MESSAGE_LENGTH = 200;

const ENVELOPE_TEXT_FIELDS = {
  request_id: errorEnvelopeSchema.pick({ request_id: true }),
  message: errorEnvelopeSchema.pick({ message: true }),
};

/**
 * One text field of the common error envelope; only error responses (status >= 400) carry one.
 * It comes from outside: bounded, single-line, free of control characters, shown as text only.
 */
function envelopeText(
  statusCode: number,
  body: unknown,
  redact: (text: string) => string,
  field: keyof typeof ENVELOPE_TEXT_FIELDS,
  maxLength: number,
): string | null {
  if (statusCode < 400) return null;
  const parsed = ENVELOPE_TEXT_FIELDS[field].safeParse(body, RESPONSE_PARSE);
  if (!parsed.success) return null;
  const text = sanitizeText(
    (parsed.data as Record<string, string>)[field] ?? '',
    redact,
    maxLength,
  );
  return text.length > 0 ? text : null;
}

/** The API's `request_id` from the common error envelope, for support tickets. */
export function extractRequestId(
  statusCode: number,
  body: unknown,
  redact: (text: string) => string,
): string | null {
  return envelopeText(statusCode, body, redact, 'request_id', 200);
}

/** The API's `message` from the common error envelope: what it said went wrong. */
export function extractErrorMessage(
  statusCode: number,
  body: unknown,
  redact: (text: string) => string,
): string | null {
  return envelopeText(statusCode, body, redact, 'message', MAX_ERROR_MESSAGE_LENGTH);
}

/** The API's own `Retry-After` for 429 (spec, "Limits"); also the meaning of an invalid header. */
export const SPEC_RETRY_AFTER_MS = 60_000;

/** A `Retry-After` header that is present but has no defined meaning (negative, garbage). */
export const INVALID_RETRY_AFTER = Symbol('invalid Retry-After');

/**
 * `Retry-After` in milliseconds from now: delay-seconds (`60`; a fraction such as `1.5` is read as
 * 1500 ms), or an HTTP-date compared with `nowMs` (wall clock, Unix ms), never negative. Null
 * when absent; `INVALID_RETRY_AFTER` when present but negative or unparsable (the client turns
 * that into the spec's 60 s). Values too large for a number of milliseconds come back as
 * `Number.MAX_SAFE_INTEGER`; the gate clamps every value to its documented maximum.
 */
export function parseRetryAfter(
  value: string | undefined,
  nowMs: number,
): number | typeof INVALID_RETRY_AFTER | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) {
    const ms = Math.ceil(Number(trimmed) * 1000);
    return Number.isFinite(ms) ? Math.min(ms, Number.MAX_SAFE_INTEGER) : Number.MAX_SAFE_INTEGER;
  }
  // An HTTP-date (IMF-fixdate, RFC 850 or asctime) starts with a weekday and is in GMT; asctime
  // omits the zone. Requiring the weekday keeps `Date.parse` from accepting odd inputs ("1.5").
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i.test(trimmed)) return INVALID_RETRY_AFTER;
  const at = Date.parse(/GMT$/i.test(trimmed) ? trimmed : `${trimmed} GMT`);
  if (Number.isNaN(at)) return INVALID_RETRY_AFTER;
  return Math.max(0, at - nowMs);
}
