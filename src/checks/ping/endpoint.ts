/**
 * The endpoint the ping calls, `GET /ping`: its operation, the status codes the API documents for
 * it, and its answer's schema (docs/simulator.md, "Behaviour, endpoint by endpoint").
 */
import { z } from 'zod';
import { isoTimestampSchema } from '../../api/schemas.js';
import type { OperationSpec } from '../../kernel/check.js';

export const pingResponseSchema = z.object({
  message: z.string(),
  timestamp: isoTimestampSchema,
});
export type PingResponse = z.infer<typeof pingResponseSchema>;

/** GET /ping: 200, "also 401, 415, 429"; and 500, which every endpoint may answer. */
export const PING_OPERATIONS = {
  ping: { codes: ['200', '401', '415', '429', '500', 'none'], response: pingResponseSchema },
} as const satisfies Record<string, OperationSpec>;
