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
import type { CheckEnvironment } from '../kernel/check.js';
import type { ProxySettings } from '../kernel/api.js';
import type {
  BudgetMisfit,
  BudgetShare,
  CheckConfigBase,
  CheckSection,
  RequestGap,
  SectionDefaults,
  SectionDocs,
} from '../kernel/section.js';

export { runDeadlineMs } from '../kernel/section.js';
export type {
  BudgetMisfit,
  BudgetShare,
  CheckConfigBase,
  CheckSection,
  RequestGap,
  SectionDefaults,
  SectionDocs,
} from '../kernel/section.js';

interface UniformParsed {
  enabled?: boolean | undefined;
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
  /**
   * The section's documentation, from which `npm run generate` writes its table in
   * docs/configuration.md: every own key, and the uniform keys' check-specific words.
   */
  docs: SectionDocs;
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
      // A default that depends on the environment is applied by `toConfig`, which knows it.
      enabled:
        typeof defaults.enabled === 'boolean'
          ? z.boolean().default(defaults.enabled)
          : z.boolean().optional(),
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
  const deprecated = { ...spec.deprecated } as Record<string, string>;
  const requestTimeoutDefault =
    defaults.requestTimeout === undefined ? null : parseDuration(defaults.requestTimeout);
  return {
    schema: schema as unknown as z.ZodType,
    defaults,
    docs: spec.docs,
    toConfig(parsed, environment) {
      const p = parsed as UniformParsed & z.output<z.ZodObject<Shape>>;
      const enabled =
        p.enabled ??
        (typeof defaults.enabled === 'boolean' ? defaults.enabled : defaults.enabled(environment));
      return {
        enabled,
        intervalMs: p.interval,
        timeoutMs: p.timeout,
        requestTimeoutMs:
          p.request_timeout ?? Math.min(requestTimeoutDefault ?? p.timeout, p.timeout),
        ...spec.toConfig(p),
      };
    },
    requestGaps(v) {
      // A default that depends on the environment counts as on: the budget must allow it.
      const enabled = v['enabled'] ?? (typeof defaults.enabled === 'boolean' ? false : true);
      if (enabled !== true) return [];
      const interval = v['interval'];
      const gaps = typeof interval === 'number' ? [{ key: `${name}.interval`, ms: interval }] : [];
      return [...gaps, ...(spec.extraGaps?.(v) ?? [])];
    },
    ...(spec.fileless ? { fileless: spec.fileless } : {}),
    ...(spec.firstRequestsPerSecond ? { firstRequestsPerSecond: spec.firstRequestsPerSecond } : {}),
    ...(spec.budgetFit ? { budgetFit: spec.budgetFit } : {}),
    deprecated,
    deprecations(parsed) {
      const section = (parsed ?? {}) as Record<string, unknown>;
      return Object.entries(deprecated)
        .filter(([key]) => section[key] !== undefined)
        .map(([key, message]) => ({ key, message }));
    },
  };
}

/**
 * The config section of `check` in `environment` (the uniform keys plus the check's own). Here,
 * not beside the loader in `index.ts`, so the measurement worker, which receives its
 * configuration ready-made, loads none of the loader's modules (the YAML parser among them).
 */
export function sectionOf<Config extends CheckConfigBase = CheckConfigBase>(
  environment: EnvironmentConfig,
  check: { name: string; config?: CheckSection<Config> },
): Config {
  const section = (environment as unknown as Record<string, Config | undefined>)[check.name];
  if (section === undefined) throw new Error(`internal: no config section for check ${check.name}`);
  return section;
}

/**
 * What a check sees of `environment` (kernel/check.ts, `CheckEnvironment`): never the API key or
 * its source. The runner hands it to each run, the recorder to each check's configuration gauges.
 */
export function checkEnvironmentOf(environment: EnvironmentConfig): CheckEnvironment {
  return {
    name: environment.name,
    baseUrl: environment.baseUrl,
    extraTrust: environment.extraTrust?.certificates ?? [],
    thresholds: environment.thresholds,
    ...(environment.proxy ? { proxy: proxySettingsOf(environment.proxy) } : {}),
    ...(environment.clientCertificate
      ? {
          clientCertificate: {
            certFile: environment.clientCertificate.certFile,
            keyFile: environment.clientCertificate.keyFile,
          },
        }
      : {}),
  };
}

/** The proxy as the client and the checks take it: without where it was configured. */
export function proxySettingsOf(proxy: ProxySettings & { source?: string }): ProxySettings {
  const { source: _source, ...settings } = proxy;
  return settings;
}
