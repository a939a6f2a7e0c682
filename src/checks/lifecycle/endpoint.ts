/**
 * The session endpoints as the lifecycle check calls them (`api/sessions.ts` builds the requests,
 * which the session ledger shares): each operation, the status codes the API documents for it,
 * and its answer's schema.
 */
import { offeringsEnvelopeSchema, sessionEnvelopeSchema } from '../../api/schemas.js';
import type { OperationSpec } from '../../kernel/check.js';

/**
 * Requests on one session (GET, DELETE and GET .../services/internet of /sessions/{token}): the
 * spec's errors of `GET /sessions/{token}` (400 invalid token, 401, 415, 410 closed, 422, 429,
 * 500); "afterwards every operation on the session returns 410".
 */
const SESSION_CODES = ['200', '400', '401', '410', '415', '422', '429', '500', 'none'] as const;

export const LIFECYCLE_OPERATIONS = {
  // POST /sessions: 201; 400, 401, 415, 422, 429, 500, 503 (address validation unavailable).
  create_session: {
    codes: ['201', '400', '401', '415', '422', '429', '500', '503', 'none'],
    response: offeringsEnvelopeSchema,
  },
  get_session: { codes: SESSION_CODES, response: sessionEnvelopeSchema },
  poll_services: { codes: SESSION_CODES, response: offeringsEnvelopeSchema },
  close_session: { codes: SESSION_CODES, response: sessionEnvelopeSchema },
  // GET /sessions/{token} after the close: 410 is the pass, 200 the contract failure.
  verify_gone: { codes: SESSION_CODES },
} as const satisfies Record<string, OperationSpec>;
