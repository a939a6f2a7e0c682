/**
 * A check's config section (`environments[].<check name>`): the uniform keys every check has
 * (`enabled`, `interval`, `timeout`, `request_timeout`) with the check's own defaults, plus the
 * check's own keys and rules. A check builds its section with `checkSection` in its own file; the
 * configuration schema adds every registered check's section to the environment mapping.
 */
import { z } from 'zod';
import type { EnvironmentConfig } from './index.js';
import { parseDuration } from './duration.js';
import {
  WHEN_MAPPING,
  intervalDuration,
  notLongerThan,
  positiveDuration,
  shorterThan,
  type Issues,
  type Loose,
} from './rules.js';

/** The uniform settings of every check, in the units the code uses. */
export interface CheckConfigBase {
  enabled: boolean;
  intervalMs: number;
  /** The deadline of one whole run. */
  timeoutMs: number;
  /** The timeout of each single request of a run. */
  requestTimeoutMs: number;
}

/**
 * The deadline of one run: its timeout, but never less than one request timeout plus a second,
 * so a single request's own timeout fires before the deadline.
 */
export function runDeadlineMs(config: CheckConfigBase): number {
  return Math.max(config.timeoutMs, config.requestTimeoutMs + 1_000);
}

/** The uniform keys' defaults, in the file's own spelling. */
export interface SectionDefaults {
  enabled: boolean;
  interval: string;
  timeout: string;
  /**
   * Default of `request_timeout`, capped at the section's `timeout`; absent means "the section's
   * timeout" (a check whose run is one request, such as ping).
   */
  requestTimeout?: string;
}

/** One request the section schedules when enabled, for the environment's request-budget rule. */
export interface RequestGap {
  /** Key path as a user reads it, e.g. `ping.interval`. */
  key: string;
  ms: number;
}

/** What the configuration layer needs of a check's section. */
export interface CheckSection<C extends CheckConfigBase = CheckConfigBase> {
  /** The zod slice: a strict mapping with defaults; its problems carry the exact messages. */
  readonly schema: z.ZodType;
  readonly defaults: SectionDefaults;
  /** The parsed section (durations in ms, file spelling) → the check's config. */
  toConfig(parsed: unknown): C;
  /**
   * The gaps between the requests this section schedules while it is enabled (read from a parse
   * that may have failed elsewhere: only numbers count).
   */
  requestGaps(v: Loose): RequestGap[];
  /** The section's content in a configuration built from environment variables (no file). */
  readonly fileless?: Record<string, unknown>;
  /** The deprecated keys set in a parsed section, each with what to do instead. */
  deprecations(parsed: unknown): Array<{ key: string; message: string }>;
  /** See `SectionSpec.firstRequestsPerSecond`. */
  firstRequestsPerSecond?(config: C): number;
  /** See `SectionSpec.budgetFit`. */
  budgetFit?(config: C, budget: BudgetShare): BudgetMisfit | null;
}

/** What the request budget leaves a check's `normal` requests (docs/configuration.md). */
export interface BudgetShare {
  /** `request_budget_per_second`. */
  perSecond: number;
  /** The bucket's refill rate over it (1.01). */
  refillFactor: number;
  /** Tokens per second kept for `first`-priority requests (pings). */
  firstPerSecond: number;
  /** `perSecond × refillFactor − firstPerSecond`: what the check's requests are paced at. */
  share: number;
}

/** A run that cannot fit its deadline under the budget: the key to change and why. */
export interface BudgetMisfit {
  key: string;
  message: string;
}

interface UniformParsed {
  enabled: boolean;
  interval: number;
  timeout: number;
  request_timeout?: number | undefined;
}

export interface SectionSpec<Shape extends z.ZodRawShape, Own> {
  /** The section's key under an environment: the check's name. */
  name: string;
  defaults: SectionDefaults;
  /** The check's own keys. */
  shape: Shape;
  /** Rules across the check's own keys (the uniform ones are checked already). */
  refine?: (v: Loose, issues: Issues) => void;
  /** The parsed own keys (beside the uniform ones, in ms) → the check's own settings. */
  toConfig: (parsed: z.output<z.ZodObject<Shape>> & UniformParsed) => Own;
  /** Requests the check makes more often than once per interval (e.g. polls). */
  extraGaps?: (v: Loose) => RequestGap[];
  fileless?: Record<string, unknown>;
  /**
   * Keys of `shape` kept only so older files still load, each with its warning (what to do
   * instead). The key's value is validated as before and then ignored by `toConfig`.
   */
  deprecated?: Partial<Record<keyof Shape & string, string>>;
  /**
   * Requests per second this check sends at `first` priority while enabled (ping: one per
   * interval, plus confirmation pings): the budget keeps a token for each.
   */
  firstRequestsPerSecond?: (config: CheckConfigBase & Own) => number;
  /**
   * Whether one run can fit its deadline when its requests are paced at what the budget leaves
   * (`config/budget-fit.ts`): null when it can, else the key to change and the arithmetic.
   */
  budgetFit?: (config: CheckConfigBase & Own, budget: BudgetShare) => BudgetMisfit | null;
}

/** Builds a check's config section: uniform keys first, then the check's own. */
export function checkSection<Shape extends z.ZodRawShape, Own extends object>(
  spec: SectionSpec<Shape, Own>,
): CheckSection<CheckConfigBase & Own> {
  const { name, defaults } = spec;
  const schema = z
    .strictObject({
      enabled: z.boolean().default(defaults.enabled),
      interval: intervalDuration().prefault(defaults.interval),
      timeout: positiveDuration().prefault(defaults.timeout),
      request_timeout: positiveDuration().optional(),
      ...spec.shape,
    })
    .superRefine((value, issues) => {
      const v = value as Loose;
      shorterThan(v, issues, 'timeout', 'interval', name);
      notLongerThan(v, issues, 'request_timeout', 'timeout', name);
      spec.refine?.(v, issues);
    }, WHEN_MAPPING);
  const requestTimeoutDefault =
    defaults.requestTimeout === undefined ? null : parseDuration(defaults.requestTimeout);
  return {
    schema: schema as unknown as z.ZodType,
    defaults,
    toConfig(parsed) {
      const p = parsed as UniformParsed & z.output<z.ZodObject<Shape>>;
      return {
        enabled: p.enabled,
        intervalMs: p.interval,
        timeoutMs: p.timeout,
        requestTimeoutMs:
          p.request_timeout ?? Math.min(requestTimeoutDefault ?? p.timeout, p.timeout),
        ...spec.toConfig(p),
      };
    },
    requestGaps(v) {
      if (v['enabled'] !== true) return [];
      const interval = v['interval'];
      const gaps = typeof interval === 'number' ? [{ key: `${name}.interval`, ms: interval }] : [];
      return [...gaps, ...(spec.extraGaps?.(v) ?? [])];
    },
    ...(spec.fileless ? { fileless: spec.fileless } : {}),
    ...(spec.firstRequestsPerSecond ? { firstRequestsPerSecond: spec.firstRequestsPerSecond } : {}),
    ...(spec.budgetFit ? { budgetFit: spec.budgetFit } : {}),
    deprecations(parsed) {
      const section = (parsed ?? {}) as Record<string, unknown>;
      return Object.entries(spec.deprecated ?? {})
        .filter(([key]) => section[key] !== undefined)
        .map(([key, message]) => ({ key, message: String(message) }));
    },
  };
}

/**
 * The config section of `check` in `environment` (the uniform keys plus the check's own). Here,
 * not beside the loader in `index.ts`, so the measurement worker, which receives its
 * configuration ready-made, loads none of the loader's modules (the YAML parser among them).
 */
export function sectionOf(
  environment: EnvironmentConfig,
  check: { name: string },
): CheckConfigBase {
  const section = (environment as unknown as Record<string, CheckConfigBase | undefined>)[
    check.name
  ];
  if (section === undefined) throw new Error(`internal: no config section for check ${check.name}`);
  return section;
}
