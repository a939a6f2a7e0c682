/**
 * The endpoints the analytics check calls, `GET /analytics/sessions` and
 * `GET /analytics/sessions/{id}`: their operations, the status codes each may answer, and their
 * answers' schemas.
 */
import { z } from 'zod';
import { isoTimestampSchema, requestStatusSchema } from '../../api/schemas.js';
import type { OperationSpec } from '../../kernel/check.js';

export const analyticsAddressSchema = z.object({
  street1: z.string(),
  street2: z.string().nullable(),
  city: z.string(),
  state: z.string(),
  zip: z.string(),
});

const orderFields = {
  order_number: z.string().nullable(),
  status: z.string().nullable(),
  ordered_at: isoTimestampSchema.nullable(),
  installed: z.boolean().nullable(),
  installed_at: isoTimestampSchema.nullable(),
  commission_cents: z.number().int().nullable(),
};

const analyticsSessionBase = {
  id: z.uuid(),
  created_at: isoTimestampSchema,
  context: z.string(),
  campaign_id: z.string().nullable(),
  address: analyticsAddressSchema,
  furthest_step: z.number().int(),
};

export const analyticsSessionRowSchema = z.object({ ...analyticsSessionBase, ...orderFields });
export type AnalyticsSessionRow = z.infer<typeof analyticsSessionRowSchema>;

export const cartProgressionStepSchema = z.object({
  step: z.number().int(),
  step_name: z.string(),
  timestamp: isoTimestampSchema,
});

export const analyticsSessionDetailSchema = z.object({
  ...analyticsSessionBase,
  order: z.object(orderFields),
  cart_progression: z.array(cartProgressionStepSchema),
});
export type AnalyticsSessionDetail = z.infer<typeof analyticsSessionDetailSchema>;

export const analyticsListResponseSchema = z.object({
  message: z.string(),
  request_status: requestStatusSchema,
  data: z.array(analyticsSessionRowSchema),
  meta: z.object({
    responded_at: isoTimestampSchema,
    page: z.number().int(),
    pages: z.number().int(),
    count: z.number().int(),
  }),
});

export const analyticsDetailResponseSchema = z.object({
  message: z.string(),
  request_status: requestStatusSchema,
  data: analyticsSessionDetailSchema,
  meta: z.object({ responded_at: isoTimestampSchema }),
});

export const ANALYTICS_OPERATIONS = {
  // GET /analytics/sessions: 403 when token_ids[] names a token not the caller's.
  list_analytics_sessions: {
    codes: ['200', '401', '403', '429', '500', 'none'],
    response: analyticsListResponseSchema,
  },
  // GET /analytics/sessions/{id}: the status of an unknown session is not shown; the analytics
  // check reads 404 as "not there yet", so it is the common answer.
  get_analytics_session: {
    codes: ['200', '401', '404', '429', '500', 'none'],
    response: analyticsDetailResponseSchema,
  },
} as const satisfies Record<string, OperationSpec>;
