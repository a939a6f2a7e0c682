/**
 * The bounded vocabulary shared by the API client, every check and the metrics: API operations,
 * request phases, status-code labels, contract-check results and skip reasons. Every label value
 * the monitor exports comes from these sets, from a check's own sets (declared in its file), or
 * from configured names; never from URLs, tokens or error messages. It lives outside `checks/`
 * so that `api/` depends on no check.
 */
import { isIP } from 'node:net';

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

/**
 * The phases a request to `baseUrl` can have: all of them where its host is a name, all but
 * `resolve` where it is an IP literal (v4, or v6 in brackets), which `net` connects to without a
 * lookup (`api/timing.ts`), so a resolve series there could only ever be empty.
 */
export function requestPhases(baseUrl: string): readonly Phase[] {
  const host = new URL(baseUrl).hostname;
  const literal = isIP(host.startsWith('[') ? host.slice(1, -1) : host) !== 0;
  return literal ? PHASES.filter((phase) => phase !== 'resolve') : PHASES;
}

/**
 * Requests on one session (GET, DELETE and GET .../services/internet of /sessions/{token}): the
 * spec's errors of `GET /sessions/{token}` (400 invalid token, 401, 415, 410 closed, 422, 429,
 * 500); "afterwards every operation on the session returns 410".
 */
const SESSION_CODES = ['200', '400', '401', '410', '415', '422', '429', '500', 'none'] as const;

/**
 * The codes `isa_http_responses_total` starts at 0 for each operation: those the API documents
 * for the operation's endpoint (docs/simulator.md, "Behaviour, endpoint by endpoint"), and
 * `none` (no response).
 * Every endpoint also gets 401 (Authentication: every endpoint requires the credential), 429
 * (Limits: the rate limit covers all endpoints) and 500 (Errors: unexpected server failure), so a
 * first rejected key, rate limit or server failure shows in `increase()` wherever it happens.
 * Any other code (a 502 from a proxy, a 404 on a moved route) appears when it is first seen. One
 * table instead of every code × every operation: 15 samples per operation and environment were
 * the largest universal family at 1000 environments.
 */
export const OPERATION_STATUS_CODES = {
  // GET /ping: 200, "also 401, 415, 429".
  ping: ['200', '401', '415', '429', '500', 'none'],
  // POST /sessions: 201; 400, 401, 415, 422, 429, 500, 503 (address validation unavailable).
  create_session: ['201', '400', '401', '415', '422', '429', '500', '503', 'none'],
  get_session: SESSION_CODES,
  poll_services: SESSION_CODES,
  close_session: SESSION_CODES,
  // GET /sessions/{token} after the close: 410 is the pass, 200 the contract failure.
  verify_gone: SESSION_CODES,
  // GET /analytics/sessions: 403 when token_ids[] names a token not the caller's.
  list_analytics_sessions: ['200', '401', '403', '429', '500', 'none'],
  // GET /analytics/sessions/{id}: the status of an unknown session is not shown; the analytics
  // check reads 404 as "not there yet", so it is the common answer.
  get_analytics_session: ['200', '401', '404', '429', '500', 'none'],
  // GET /service_providers: 401, 415, 429, 500.
  service_providers: ['200', '401', '415', '429', '500', 'none'],
  // GET /coverage: its errors are not shown.
  coverage: ['200', '401', '429', '500', 'none'],
  // GET /coverage without geography: the refusal's status is not shown; 400 is the spec's
  // "missing parameters", 200 the contract failure.
  coverage_no_geography: ['200', '400', '401', '429', '500', 'none'],
} as const satisfies Record<Operation, readonly string[]>;

/** A status code some operation starts at 0 on `isa_http_responses_total`. */
export type KnownStatusCode = (typeof OPERATION_STATUS_CODES)[Operation][number];

/**
 * Every code some operation starts at 0: the union of `OPERATION_STATUS_CODES`, sorted (numbers,
 * then `none`). Others appear when first seen.
 */
export const KNOWN_STATUS_CODES: readonly KnownStatusCode[] = [
  ...new Set<KnownStatusCode>(Object.values(OPERATION_STATUS_CODES).flat()),
].sort();

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
