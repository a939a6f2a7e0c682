/**
 * What every check does with a single request: the per-request options from its context, and
 * the bounded result of an answer that is not a 200 (or of no answer at all), so that `timeout`,
 * `unauthorized` and the rest mean the same in every check's results.
 */
import type { ApiResponse, RequestOptions } from '../../api/client.js';
import type { CheckContext } from '../../kernel/check.js';

/** How a request failed before any body could be judged. */
export const REQUEST_FAILURES = [
  'server_error',
  'timeout',
  'network_error',
  'unauthorized',
  'rate_limited',
  'unexpected_status',
  'proxy_error',
] as const;
export type RequestFailure = (typeof REQUEST_FAILURES)[number];

/** The request's timeout, the run's abort signal and its correlation id. */
export function requestOptions(ctx: CheckContext): RequestOptions {
  return {
    timeoutMs: ctx.config.requestTimeoutMs,
    signal: ctx.signal,
    correlationId: ctx.correlationId,
  };
}

/**
 * The failure of a response that is not a 200, or null for a 200. An abort is the run's own
 * deadline: the API did not answer in time. `proxy_error` is the environment's egress proxy
 * refusing or not answering (a `PROXY_*` code, or a 407, which only a proxy sends):
 * docs/configuration.md, "Egress proxy".
 */
export function requestFailure(response: ApiResponse): RequestFailure | null {
  const reason = response.transportError?.reason;
  if (reason !== undefined) {
    if (reason === 'network_error' || reason === 'proxy_error') return reason;
    return 'timeout';
  }
  const status = response.statusCode ?? 0;
  if (status === 200) return null;
  if (status === 407) return 'proxy_error';
  if (status === 401) return 'unauthorized';
  if (status === 429) return 'rate_limited';
  return status >= 500 ? 'server_error' : 'unexpected_status';
}

/**
 * The results a check's run counter starts at 0: all but `proxy_error`, which appears when first
 * seen. A proxy failure is the monitor's own egress, which no rule counts with `increase()`, and a
 * series per check and environment for it would exceed the series budget of an environment that
 * runs only the ping (test/metrics/samples.test.ts).
 */
export function initialResults<T extends string>(results: readonly T[]): T[] {
  return results.filter((result) => result !== 'proxy_error');
}
