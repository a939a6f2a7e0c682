/**
 * The bounded vocabulary shared by the API client, every check and the metrics: request phases,
 * contract-check results, outcomes and skip reasons. Every label value the monitor exports comes
 * from these sets, from a check's own sets (declared in its folder: its operations with their
 * status codes, its contract checks), or from configured names; never from URLs, tokens or error
 * messages. It lives outside `checks/` so that `api/` depends on no check.
 */
import { isIP } from 'node:net';

/**
 * An API operation, as an `operation` label value: each check declares the operations it performs
 * and the status codes their endpoints document (`Check.operations`); the catalog of a list of
 * checks takes the set from them (`metrics/definitions.ts`, `metricCatalog`).
 */
export type Operation = string;

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
 * A contract check: an assertion about the API's promises, counted in `isa_contract_checks_total`.
 * Each check declares the ones it reports (`Check.contractChecks`).
 */
export type ContractCheck = string;
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
