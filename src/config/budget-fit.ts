/**
 * Whether a lifecycle run fits its deadline under the environment's request budget: the warnings
 * of `validate-config` and of the daemon's start (docs/configuration.md, "Request budget").
 *
 * Pings come first: the budget keeps a token for each one (and for each confirmation ping), so
 * the lifecycle has what is left, `N × 1.01 − pings per second`. Its poll loop may last
 * `poll_timeout`, one poll's wait past it included; the create before it, the get, close and
 * 410 check after it, and one more poll make five requests paced at that rate. A run that needs
 * more than its deadline for them cannot succeed against a healthy API: its steps end as `budget`.
 * A warning, not an error: a configuration that was valid stays valid, and a run whose API
 * qualifies sooner than `poll_timeout` may still fit.
 */
import { REFILL_HEADROOM } from '../limits/request-budget.js';
import { formatDuration } from './duration.js';
import type { ConfigProblem } from './problems.js';
import type { EnvironmentConfig } from './index.js';

/** The requests of a lifecycle run besides its polls within `poll_timeout`. */
export const LIFECYCLE_PACED_REQUESTS = 5;

/** The configuration's budget warnings, one per environment whose lifecycle cannot fit. */
export function budgetWarnings(environments: readonly EnvironmentConfig[]): ConfigProblem[] {
  return environments.flatMap((env, index) => {
    const warning = lifecycleFit(env);
    return warning === null
      ? []
      : [{ path: `environments[${index}].lifecycle.timeout`, message: warning }];
  });
}

function lifecycleFit(env: EnvironmentConfig): string | null {
  const { lifecycle, ping } = env;
  if (!lifecycle.enabled) return null;
  const pingsPerSecond = ping.enabled
    ? 1000 / ping.intervalMs + (ping.confirm ? 1000 / ping.confirm.intervalMs : 0)
    : 0;
  const budget = env.requestBudgetPerSecond;
  const share = budget * (1 + REFILL_HEADROOM) - pingsPerSecond;
  const deadlineMs = Math.max(lifecycle.timeoutMs, lifecycle.requestTimeoutMs + 1_000);
  const neededMs =
    share > 0 ? lifecycle.pollTimeoutMs + (LIFECYCLE_PACED_REQUESTS * 1000) / share : Infinity;
  if (neededMs <= deadlineMs) return null;
  const spareMs = deadlineMs - lifecycle.pollTimeoutMs;
  const shareNeeded = (LIFECYCLE_PACED_REQUESTS * 1000) / spareMs;
  const budgetNeeded =
    Math.ceil(((shareNeeded + pingsPerSecond) / (1 + REFILL_HEADROOM)) * 100) / 100;
  const rate = (n: number) => `${Math.round(n * 1000) / 1000}/s`;
  const pings = pingsPerSecond > 0 ? ` - ${rate(pingsPerSecond)} kept for pings` : '';
  const arithmetic =
    share > 0
      ? `poll_timeout ${formatDuration(lifecycle.pollTimeoutMs)} + ${LIFECYCLE_PACED_REQUESTS} requests at the ${rate(share)} the budget leaves (request_budget_per_second ${budget} × ${1 + REFILL_HEADROOM}${pings}) = ${formatSeconds(neededMs)}`
      : `the budget leaves nothing after pings (request_budget_per_second ${budget} × ${1 + REFILL_HEADROOM}${pings})`;
  return (
    `a lifecycle run may need longer than its ${formatSeconds(deadlineMs)} deadline: ${arithmetic}; ` +
    `its runs would end as "budget". Raise request_budget_per_second to at least ${budgetNeeded}, ` +
    `or lifecycle.timeout to at least ${share > 0 ? formatSeconds(Math.ceil(neededMs / 100) * 100) : 'what the budget allows'}, ` +
    `or lengthen ping.interval`
  );
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10}s`;
}
