/**
 * The ISA API's shared pieces in code: the session endpoints (which the session ledger and the
 * lifecycle check share), the parts several answers are made of, and the error envelope, with the
 * TypeScript types inferred from them. The schema of an answer only one check reads lives in that
 * check's folder (`checks/<name>/endpoint.ts`); the simulator keeps its own (`simulator/schemas.ts`).
 * The monitor validates every response it receives against them (the `response_schema` contract
 * check). Response schemas are non-strict on purpose:
 * an extra field the spec does not name is tolerated here and reported separately by
 * `validateResponse` (see `validate.ts`).
 */
import { z } from 'zod';

/** The 50 states plus PR, as the spec lists them (DC-style extras excluded). */
export const US_STATES = [
  'AL', 'AK', 'AZ', 'AR', 'CA', 'CO', 'CT', 'DE', 'FL', 'GA', 'HI', 'ID', 'IL', 'IN', 'IA', 'KS',
  'KY', 'LA', 'ME', 'MD', 'MA', 'MI', 'MN', 'MS', 'MO', 'MT', 'NE', 'NV', 'NH', 'NJ', 'NM', 'NY',
  'NC', 'ND', 'OH', 'OK', 'OR', 'PA', 'PR', 'RI', 'SC', 'SD', 'TN', 'TX', 'UT', 'VT', 'VA', 'WA',
  'WV', 'WI', 'WY',
] as const; // prettier-ignore
export type UsState = (typeof US_STATES)[number];

export const ZIP_PATTERN = /^\d{5}(-\d{4})?$/;
export const STATE_PATTERN = /^[A-Z]{2}$/;

// ---------------------------------------------------------------------------------------------
// Session request
// ---------------------------------------------------------------------------------------------

/** Every field the spec permits in a session-creation body; anything else is a 400. */
export const SESSION_REQUEST_FIELDS = [
  'street1',
  'street2',
  'city',
  'state',
  'zip',
  'latitude',
  'longitude',
  'campaign_id',
] as const;

/** Field rules of a session request. Strict: unpermitted fields fail. */
export const sessionRequestSchema = z.strictObject({
  street1: z.string().min(1).max(100),
  street2: z.string().min(1).max(50).optional(),
  city: z.string().min(1).max(50).optional(),
  state: z
    .string()
    .regex(STATE_PATTERN, 'must be two uppercase letters')
    .refine((s) => (US_STATES as readonly string[]).includes(s), 'is not a supported state')
    .optional(),
  zip: z.string().regex(ZIP_PATTERN, 'must be 5 digits, optionally plus 4').optional(),
  latitude: z.number().optional(),
  longitude: z.number().optional(),
  campaign_id: z.string().min(1).max(100).optional(),
});
export type SessionRequest = z.infer<typeof sessionRequestSchema>;

/** The three valid address combinations of the spec, in the order it lists them. */
export type AddressCombination = 'street1+zip' | 'street1+city+state' | 'street1+city+zip';

/** Which valid address combination a request carries, or null when it carries none. */
export function addressCombination(req: Partial<SessionRequest>): AddressCombination | null {
  if (!req.street1) return null;
  if (req.zip) return req.city ? 'street1+city+zip' : 'street1+zip';
  if (req.city && req.state) return 'street1+city+state';
  return null;
}

// ---------------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------------

export const QUALIFY_STATUSES = [
  'available',
  'no_service',
  'pending',
  'failed',
  'retry_later',
] as const;
export const qualifyStatusSchema = z.enum(QUALIFY_STATUSES);
export type QualifyStatus = z.infer<typeof qualifyStatusSchema>;
/** Statuses that end a polling loop. */
export const TERMINAL_QUALIFY_STATUSES = ['available', 'no_service', 'failed'] as const;
export type TerminalQualifyStatus = (typeof TERMINAL_QUALIFY_STATUSES)[number];
export function isTerminalQualifyStatus(s: string): s is TerminalQualifyStatus {
  return (TERMINAL_QUALIFY_STATUSES as readonly string[]).includes(s);
}

export const requestStatusSchema = z.enum(['ok', 'warning', 'error']);
export type RequestStatus = z.infer<typeof requestStatusSchema>;

/** An ISO-8601 timestamp as the API writes them (offset or Z, optional fraction). */
export const isoTimestampSchema = z.iso.datetime({ offset: true, local: false });

export const moneySchema = z.object({
  amount_cents: z.number().int(),
  currency: z.string().min(1),
});
export type Money = z.infer<typeof moneySchema>;

/** Empty object, or `promo_text` and `promo_logo_url`. */
export const promoSchema = z.object({
  promo_text: z.string().optional(),
  promo_logo_url: z.string().optional(),
});

// ---------------------------------------------------------------------------------------------
// Provider offerings and product catalog
// ---------------------------------------------------------------------------------------------

export const PRICING_KEYS = [
  'extra_data_fee',
  'professional_installation_fee',
  'self_installation_fee',
  'activation_fee',
  'initial_term_discount',
  'second_term_discount',
  'third_term_discount',
  'autopay_discount',
  'paperless_billing_discount',
  'combined_autopay_paperless_discount',
  'net_monthly_price',
  'gross_monthly_fee',
] as const;

export const pricingSchema = z.object({
  extra_data_fee: moneySchema,
  professional_installation_fee: moneySchema,
  self_installation_fee: moneySchema,
  activation_fee: moneySchema,
  initial_term_discount: moneySchema,
  second_term_discount: moneySchema,
  third_term_discount: moneySchema.optional(), // absent in some responses
  autopay_discount: moneySchema,
  paperless_billing_discount: moneySchema,
  combined_autopay_paperless_discount: moneySchema,
  net_monthly_price: moneySchema,
  gross_monthly_fee: moneySchema,
});
export type Pricing = z.infer<typeof pricingSchema>;

export const productSchema = z.object({
  id: z.uuid(),
  sku: z.string(),
  name: z.string(),
  category: z.string(),
  category_name: z.string(),
  technology: z.string(),
  position: z.number().int(),
  select_type: z.string(),
  description: z.string(),
  download_speed: z.string().nullable(),
  upload_speed: z.string().nullable(),
  data_limit: z.string(),
  channel_count: z.number().int(),
  streaming_apps: z.array(z.unknown()),
  is_required_to_checkout: z.boolean(),
  is_contract_required: z.boolean(),
  is_modem_router_included: z.boolean(),
  is_bundle_qualifier: z.boolean(),
  bundle_discounts: z.record(z.string(), z.unknown()),
  is_local_checkout: z.boolean(),
  required_with_plans: z.array(z.string()),
  included_with_plans: z.array(z.string()),
  only_available_with_plans: z.array(z.string()),
  initial_term_discount_months: z.number().int(),
  second_term_discount_months: z.number().int().nullable(),
  service_rank: z.number().int().nullable(),
  max_quantity: z.number().int(),
  product_promo: z.record(z.string(), z.unknown()),
  info: z.string(),
  pricing: pricingSchema,
});
export type Product = z.infer<typeof productSchema>;

export const categorySchema = z.object({
  category: z.string(),
  category_name: z.string(),
  category_description: z.string(),
  products: z.array(productSchema),
});
export type Category = z.infer<typeof categorySchema>;

export const technologyOfferingSchema = z.object({
  technology: z.string(),
  max_download_speed: z.number(),
  max_upload_speed: z.number(),
});

export const providerOfferingSchema = z.object({
  provider_id: z.string(),
  provider_name: z.string(),
  provider_icon: z.string().nullable(),
  provider_logo: z.url(),
  telephone: z.string(),
  url: z.url(),
  button_label: z.string(),
  min_plan_price: moneySchema,
  provider_promo: promoSchema,
  url_promo: promoSchema,
  offerings: z.array(technologyOfferingSchema),
  product_catalog: z.array(categorySchema),
  security_token: z.string().optional(),
  buyflow_type: z.string().optional(),
});
export type ProviderOffering = z.infer<typeof providerOfferingSchema>;

// ---------------------------------------------------------------------------------------------
// Session metadata and envelopes
// ---------------------------------------------------------------------------------------------

export const sessionStatusSchema = z.enum(['open', 'closed']);
export type SessionStatus = z.infer<typeof sessionStatusSchema>;

export const sessionParamsSchema = z.object({
  street1: z.string(),
  street2: z.string().nullable(),
  city: z.string(),
  state: z.string(),
  zip: z.string(),
  latitude: z.string(),
  longitude: z.string(),
  campaign_id: z.string().nullable(),
});

export const agentStatusSchema = z.object({
  geocoding: z.string(),
  internet: z.string(),
  checkout: z.string(),
});

/** A numeric string naming the data set behind a response. */
export const serviceDataSetSchema = z.string().regex(/^\d+$/, 'must be a numeric string');

/** The full form of `meta`. */
export const sessionMetaSchema = z.object({
  session_token: z.string().min(1),
  session_status: sessionStatusSchema,
  session_params: sessionParamsSchema,
  service_address: z.string(),
  mdu: z.boolean(),
  agent_status: agentStatusSchema,
  created_at: isoTimestampSchema,
  updated_at: isoTimestampSchema,
  responded_at: isoTimestampSchema,
  service_data_set: serviceDataSetSchema,
});
export type SessionMeta = z.infer<typeof sessionMetaSchema>;

/**
 * The short creation form of `meta`: only these four keys. Strict, so that a full-form `meta`
 * missing a required field is a violation instead of passing as the short form.
 */
export const sessionMetaShortSchema = z.strictObject({
  session_token: z.string().min(1),
  session_status: sessionStatusSchema,
  responded_at: isoTimestampSchema,
  service_data_set: serviceDataSetSchema,
});
export type SessionMetaShort = z.infer<typeof sessionMetaShortSchema>;

const envelopeBase = {
  message: z.string(),
  request_status: requestStatusSchema,
  qualify_status: qualifyStatusSchema.optional(),
};

/** Creation and internet-services responses: `data` is an array of provider offerings. */
export const offeringsEnvelopeSchema = z.object({
  ...envelopeBase,
  data: z.array(providerOfferingSchema),
  meta: z.union([sessionMetaSchema, sessionMetaShortSchema]),
});
export type OfferingsEnvelope = z.infer<typeof offeringsEnvelopeSchema>;

/** Get and close responses: `data` is an object with only `session_token`. */
export const sessionEnvelopeSchema = z.object({
  ...envelopeBase,
  data: z.object({ session_token: z.string().min(1) }),
  meta: sessionMetaSchema,
});
export type SessionEnvelope = z.infer<typeof sessionEnvelopeSchema>;

// ---------------------------------------------------------------------------------------------
// The endpoints of the checks (ping, provider list, coverage, analytics) are in their folders
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** The common error envelope of controller-handled errors. */
export const errorEnvelopeSchema = z.object({
  message: z.string(),
  request_status: requestStatusSchema,
  request_id: z.string(),
  errors: z.record(z.string(), z.array(z.string())).optional(),
});
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

/** The 415 body. */
export const unsupportedMediaTypeBodySchema = z.object({
  error: z.string(),
  message: z.string(),
  status: z.literal(415),
});
export type UnsupportedMediaTypeBody = z.infer<typeof unsupportedMediaTypeBodySchema>;

/** The 503 body of session creation when address validation is unavailable (no envelope). */
export const addressValidationUnavailableBodySchema = z.object({
  address_validation_unavailable: z.literal(true),
});
