/**
 * The simulator's own schemas of the answers only one check reads (ping, provider list, coverage,
 * analytics): the fake API builds and validates its answers with these, not with the checks'
 * (`checks/<name>/endpoint.ts`), so a mistake in a check's reading of the spec is not copied into
 * the fake that tests it (docs/architecture.md). The shared pieces come from `api/schemas.ts`.
 */
import { z } from 'zod';
import {
  isoTimestampSchema,
  requestStatusSchema,
  technologyOfferingSchema,
} from '../api/schemas.js';

export const pingResponseSchema = z.object({
  message: z.string(),
  timestamp: isoTimestampSchema,
});
export type PingResponse = z.infer<typeof pingResponseSchema>;

export const serviceProviderSchema = z.object({
  id: z.string(),
  name: z.string(),
  fcc_name: z.string(),
  total_residential_units: z.number().int(),
  type: z.enum(['fcc_provider', 'supplemental_brand']),
});
export type ServiceProvider = z.infer<typeof serviceProviderSchema>;

export const serviceProvidersResponseSchema = z.object({
  providers: z.array(serviceProviderSchema),
});

/** Census-geography query patterns of GET /coverage. */
export const COVERAGE_PATTERNS = {
  states: /^([A-Z]{2}|\d{2})$/,
  counties: /^\d{5}$/,
  tracts: /^\d{11}$/,
  blocks: /^\d{15}$/,
} as const;

export const coverageProviderSchema = z.object({
  provider_id: z.string(),
  provider_name: z.string(),
  provider_logo: z.url(),
  telephone: z.string(),
  url: z.url(),
  offerings: z.array(technologyOfferingSchema),
  matched_areas: z.array(z.string()),
});

export const coverageResponseSchema = z.object({
  message: z.string(),
  request_status: requestStatusSchema,
  data: z.array(coverageProviderSchema),
  meta: z.record(z.string(), z.unknown()),
});

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
