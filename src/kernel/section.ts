/**
 * The contract of a check's config section (`environments[].<check name>`): the uniform settings
 * every check has and what the configuration layer needs of a section. `config/section.ts` builds
 * sections (`checkSection`); checks use it, and the configuration schema adds each section it is
 * handed (docs/architecture.md, "The kernel").
 */
import type { z } from 'zod';

export type Loose = Partial<Record<string, unknown>>;

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

/** What a section's defaults may depend on: the environment's own settings. */
export interface SectionEnvironment {
  baseUrl: string;
}

/** The uniform keys' defaults, in the file's own spelling. */
export interface SectionDefaults {
  /**
   * Whether the check runs where `enabled` is not set: a fixed default, or one that depends on
   * the environment (e.g. only for an `https` base URL).
   */
  enabled: boolean | ((environment: SectionEnvironment) => boolean);
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

/**
 * What docs/configuration.md says of one key of a section, beyond what the schema and the
 * section's defaults already say: `npm run generate` writes the section's table from both.
 */
export interface KeyDoc {
  /** The value type as docs/configuration.md, "Value types", names it; given for own keys only. */
  type?: string;
  /** The default as the table shows it, where the schema's own default does not say it. */
  default?: string;
  /** Meaning and rules; for a uniform key, what follows the rules every section shares. */
  meaning?: string;
}

/** A section's documentation: its table in docs/configuration.md, "Check sections". */
export interface SectionDocs {
  /** What the check does: the meaning of the section's own row. */
  summary: string;
  /** The section's default, where it is on or off depending on the environment. */
  default?: string;
  /** Per key path inside the section (`confirm.window`); every key of the schema needs one. */
  keys: Readonly<Record<string, KeyDoc>>;
}

/** What the configuration layer needs of a check's section. */
export interface CheckSection<C extends CheckConfigBase = CheckConfigBase> {
  /** The zod slice: a strict mapping with defaults; its problems carry the exact messages. */
  readonly schema: z.ZodType;
  readonly defaults: SectionDefaults;
  readonly docs: SectionDocs;
  /** The parsed section (durations in ms, file spelling) of `environment` → the check's config. */
  toConfig(parsed: unknown, environment: SectionEnvironment): C;
  /**
   * The gaps between the requests this section schedules while it is enabled (read from a parse
   * that may have failed elsewhere: only numbers count).
   */
  requestGaps(v: Loose): RequestGap[];
  /** The section's content in a configuration built from environment variables (no file). */
  readonly fileless?: Record<string, unknown>;
  /** Every deprecated key of the section with its warning (docs/configuration.md lists them). */
  readonly deprecated: Readonly<Record<string, string>>;
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
