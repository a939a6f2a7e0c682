/**
 * The endpoint the coverage check calls, `GET /coverage`: its query patterns, its operations
 * (with and without geography), the status codes each may answer, and its answer's schema.
 */
import { z } from 'zod';
import { requestStatusSchema, technologyOfferingSchema } from '../../api/schemas.js';
import type { OperationSpec } from '../../kernel/check.js';

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

export const COVERAGE_OPERATIONS = {
  // GET /coverage: its errors are not shown.
  coverage: { codes: ['200', '401', '429', '500', 'none'], response: coverageResponseSchema },
  // GET /coverage without geography: the refusal's status is not shown; 400 is the spec's
  // "missing parameters", 200 the contract failure.
  coverage_no_geography: { codes: ['200', '400', '401', '429', '500', 'none'] },
} as const satisfies Record<string, OperationSpec>;
