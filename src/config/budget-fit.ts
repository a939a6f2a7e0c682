/**
 * Whether each check's run fits its deadline under the environment's request budget: the warnings
 * of `validate-config` and of the daemon's start (docs/configuration.md, "Request budget").
 *
 * `first`-priority requests come first: the budget keeps a token for each one, so the other
 * requests have what is left, `N × 1.01 − first requests per second`. A check that declares
 * `budgetFit` says whether its run fits its deadline at that pace (the lifecycle: its poll loop
 * plus five paced requests). A warning, not an error: a configuration that was valid stays
 * valid, and a run whose API answers sooner than the worst case may still fit.
 */
import type { AnyCheck } from '../kernel/check.js';
import { REFILL_HEADROOM } from '../limits/request-budget.js';
import type { ConfigProblem } from './problems.js';
import { sectionOf, type CheckConfigBase, type CheckSection } from './section.js';
import type { EnvironmentConfig } from './index.js';

/** The configuration's budget warnings, one per check whose run cannot fit, in every environment. */
export function budgetWarnings(
  environments: readonly EnvironmentConfig[],
  checks: readonly AnyCheck[],
): ConfigProblem[] {
  return environments.flatMap((env, index) => {
    const sections = checks
      .map((check) => ({
        check,
        section: check.config as unknown as CheckSection,
        config: sectionOf(env, check) as CheckConfigBase,
      }))
      .filter(({ config }) => config.enabled);
    const firstPerSecond = sections.reduce(
      (sum, { section, config }) => sum + (section.firstRequestsPerSecond?.(config) ?? 0),
      0,
    );
    const refillFactor = 1 + REFILL_HEADROOM;
    const perSecond = env.requestBudgetPerSecond;
    const budget = {
      perSecond,
      refillFactor,
      firstPerSecond,
      share: perSecond * refillFactor - firstPerSecond,
    };
    return sections.flatMap(({ check, section, config }) => {
      const misfit = section.budgetFit?.(config, budget) ?? null;
      return misfit === null
        ? []
        : [{ path: `environments[${index}].${check.name}.${misfit.key}`, message: misfit.message }];
    });
  });
}
