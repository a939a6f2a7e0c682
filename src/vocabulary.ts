/**
 * The bounded vocabulary shared by the API client, every check and the metrics: API operations,
 * request phases, status-code labels, contract-check results and skip reasons. Every label value
 * the monitor exports comes from these sets, from a check's own sets (declared in its file), or
 * from configured names; never from URLs, tokens or error messages. It lives outside `checks/`
 * so that `api/` depends on no check.
 */

/** The API operations the monitor performs, as `operation` label values. */
export const OPERATIONS = [
  'ping',
  'create_session',
  'get_session',
  'poll_services',
  'close_session',
  'verify_gone',
  'list_analytics_sessions',
  'get_analytics_session',
  'service_providers',
  'coverage',
  'coverage_no_geography',
] as const;
export type Operation = (typeof OPERATIONS)[number];

/** Phases of one HTTP request, as measured by the client's timing hooks. */
export const PHASES = ['resolve', 'connect', 'tls', 'processing', 'transfer'] as const;
export type Phase = (typeof PHASES)[number];

/** HTTP status codes pre-initialised on `isa_http_responses_total` so the first failure shows. */
export const KNOWN_STATUS_CODES = [
  '200', '201', '400', '401', '403', '404', '410', '415', '422', '429', '500', '502', '503', '504', 'none',
] as const; // prettier-ignore

/** Contract checks: assertions about the API's promises, counted in `isa_contract_checks_total`. */
export const CONTRACT_CHECKS = [
  'analytics_campaign_id',
  'closed_session_gone',
  'response_schema',
  'session_token_header',
  'provider_order',
  'matched_areas',
  'geography_required',
] as const;
export type ContractCheck = (typeof CONTRACT_CHECKS)[number];
export const CONTRACT_RESULTS = ['pass', 'fail', 'error'] as const;
export type ContractResult = (typeof CONTRACT_RESULTS)[number];

/** Why a scheduled run did not run. */
export const SKIP_REASONS = [
  'overlap',
  'rate_limit_backoff',
  'budget',
  'ledger_unwritable',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** The two outcomes of every check run. */
export const OUTCOMES = ['pass', 'fail'] as const;
export type Outcome = (typeof OUTCOMES)[number];
