import { QUALIFY_STATUSES } from '../api/schemas.js';

/**
 * The bounded vocabularies of check results. Every label value the monitor exports comes from
 * these sets (plus configured environment names), never from URLs, tokens or error messages.
 */

export const CHECK_NAMES = ['ping', 'lifecycle'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/** Result of one ping attempt. */
export const PING_RESULTS = [
  'ok',
  'server_error',
  'timeout',
  'network_error',
  'unauthorized',
  'rate_limited',
  'unexpected_status',
  'invalid_body',
] as const;
export type PingResult = (typeof PING_RESULTS)[number];

/** Result of one finished lifecycle run. */
export const LIFECYCLE_RESULTS = [
  'success',
  'create_failed',
  'qualify_failed',
  'qualify_timeout',
  'unexpected_outcome',
  'close_failed',
  'not_gone_after_close',
  'unauthorized',
  'rate_limited',
  'address_validation_unavailable',
  'error',
] as const;
export type LifecycleResult = (typeof LIFECYCLE_RESULTS)[number];

export const LIFECYCLE_STEPS = ['create', 'poll', 'get', 'close', 'verify_gone'] as const;
export type LifecycleStep = (typeof LIFECYCLE_STEPS)[number];

/** Final qualify status of a run; `timeout` means unknown (the 90 s give-up), never no-service. */
export const QUALIFY_OUTCOMES = ['available', 'no_service', 'failed', 'timeout'] as const;
export type QualifyOutcome = (typeof QUALIFY_OUTCOMES)[number];

/** Every qualify_status a poll can see: the API's own set. */
export const POLL_STATUSES = QUALIFY_STATUSES;

export const LATENCY_CLASSES = ['expected', 'elevated', 'warning', 'critical'] as const;
export type LatencyClass = (typeof LATENCY_CLASSES)[number];

/** The configured threshold levels exported as `isa_latency_threshold_seconds{level}`. */
export const THRESHOLD_LEVELS = ['expected', 'warning', 'critical'] as const;
export type ThresholdLevel = (typeof THRESHOLD_LEVELS)[number];

export const CONTRACT_CHECKS = [
  'closed_session_gone',
  'response_schema',
  'session_token_header',
] as const;
export type ContractCheck = (typeof CONTRACT_CHECKS)[number];
export const CONTRACT_RESULTS = ['pass', 'fail', 'error'] as const;
export type ContractResult = (typeof CONTRACT_RESULTS)[number];

/** The API operations the monitor performs, as `operation` label values. */
export const OPERATIONS = [
  'ping',
  'create_session',
  'get_session',
  'poll_services',
  'close_session',
  'verify_gone',
] as const;
export type Operation = (typeof OPERATIONS)[number];

export const SKIP_REASONS = [
  'overlap',
  'rate_limit_backoff',
  'budget',
  'ledger_unwritable',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export const PHASES = ['resolve', 'connect', 'tls', 'processing', 'transfer'] as const;
export type Phase = (typeof PHASES)[number];

/** HTTP status codes pre-initialised on `isa_http_responses_total` so the first failure shows. */
export const KNOWN_STATUS_CODES = [
  '200', '201', '400', '401', '403', '404', '410', '415', '422', '429', '500', '502', '503', '504', 'none',
] as const; // prettier-ignore
