/**
 * The endpoint the providers check calls, `GET /service_providers`: its operation, the status
 * codes the API documents for it, and its answer's schema.
 */
import { z } from 'zod';
import type { OperationSpec } from '../../kernel/check.js';

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

/** GET /service_providers: 200; 401, 415, 429, 500. */
export const PROVIDERS_OPERATIONS = {
  service_providers: {
    codes: ['200', '401', '415', '429', '500', 'none'],
    response: serviceProvidersResponseSchema,
    listsProviders: true,
  },
} as const satisfies Record<string, OperationSpec>;
