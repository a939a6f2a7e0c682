/**
 * The query parameters of the JSON endpoints (`/api/status`, `/api/history`): each given at most
 * once, every name known, numbers within their bounds, environments and checks that exist.
 * Problems name the parameter and what it takes, never echo the value that was sent.
 */
import type { Request } from 'express';

/** A query the endpoint refuses: the status to answer and the message of the JSON error. */
export interface QueryProblem {
  problem: string;
  status: number;
}

export function isProblem(value: unknown): value is QueryProblem {
  return typeof value === 'object' && value !== null && 'problem' in value;
}

/**
 * The parameters of `raw`, each a single string; a 400 for a repeated parameter or one the
 * endpoint does not know (a typo such as `env=` would otherwise answer everything, unfiltered).
 */
export function singleParameters<Name extends string>(
  raw: Request['query'],
  known: readonly Name[],
): Partial<Record<Name, string>> | QueryProblem {
  const params: Partial<Record<Name, string>> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!(known as readonly string[]).includes(name)) {
      return { problem: `unknown parameter; this endpoint takes ${known.join(', ')}`, status: 400 };
    }
    if (typeof value !== 'string')
      return { problem: 'each parameter may be given once', status: 400 };
    params[name as Name] = value;
  }
  return params;
}

/** `limit` as an integer from 1 to `max`. */
export function limitParameter(value: string, max: number): number | QueryProblem {
  const n = /^\d{1,6}$/.test(value) ? Number(value) : 0;
  if (n < 1 || n > max)
    return { problem: `limit must be an integer from 1 to ${max}`, status: 400 };
  return n;
}

/** An `environment` that must be configured and a `check` that must be registered: else 404. */
export function environmentAndCheck(
  params: { environment?: string; check?: string },
  hasEnvironment: (name: string) => boolean,
  hasCheck: (name: string) => boolean,
): { environment?: string; check?: string } | QueryProblem {
  const { environment, check } = params;
  if (environment !== undefined && !hasEnvironment(environment)) {
    return { problem: 'no such environment', status: 404 };
  }
  if (check !== undefined && !hasCheck(check)) {
    return { problem: 'no such check', status: 404 };
  }
  return {
    ...(environment !== undefined ? { environment } : {}),
    ...(check !== undefined ? { check } : {}),
  };
}
