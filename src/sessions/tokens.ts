/**
 * What a response says about sessions: the tokens it carries and whether it proves a close.
 *
 * A token is learned from any answer to a create, whatever its status (a 200 or 202 instead of
 * 201, a 500 from a proxy that still forwarded the header), from the `session_token` header and
 * from the body's `meta.session_token` (and `data.session_token`). When they disagree, both are
 * returned: either may name a session that is open, and closing a token that names none costs one
 * request.
 */
import type { ApiResponse } from '../api/client.js';
import { errorEnvelopeSchema } from '../api/schemas.js';
import { RESPONSE_PARSE } from '../api/validate.js';

const MAX_TOKEN_LENGTH = 200;
const TOKEN_TEXT = /^[\x21-\x7e]+$/;

/** Every distinct plausible session token in `response`, the body's first. */
export function sessionTokensOf(response: ApiResponse): string[] {
  const body = record(response.body);
  const candidates = [
    record(body?.['meta'])?.['session_token'],
    record(body?.['data'])?.['session_token'],
    response.headers['session_token'],
  ];
  const tokens: string[] = [];
  for (const candidate of candidates) {
    if (isToken(candidate) && !tokens.includes(candidate)) tokens.push(candidate);
  }
  return tokens;
}

function isToken(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_TOKEN_LENGTH && TOKEN_TEXT.test(value);
}

/**
 * True when a `DELETE /sessions/{token}` answer means the session is closed: a 200, or a 410
 * carrying the API's own error envelope (JSON with `message`, `request_status` and `request_id`).
 * A 410 from a proxy or a misrouted request has some other body and proves nothing; 400, 404 and
 * everything else leave the session listed, to be tried again.
 */
export function confirmsClose(response: ApiResponse): boolean {
  if (response.statusCode === 200) return true;
  if (response.statusCode !== 410) return false;
  return errorEnvelopeSchema.safeParse(response.body, RESPONSE_PARSE).success;
}

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
