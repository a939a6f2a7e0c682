/**
 * The check registry and the composition root: adding a check is one folder in `checks/` plus one
 * line in `CHECK_LIST`. The entry points (the CLI, the measurement worker) and the tools that
 * generate from the checks (rules, dashboards, docs) import it and hand the list to the generic
 * layers (config, environment, scheduler, metrics, server), which never import it
 * (docs/architecture.md, "The composition root"). The order here is the order of config
 * sections, schedules and documents, and of the checks' rules and rule-test scenarios that
 * `npm run generate` assembles (docs/architecture.md, "Generated files").
 */
import { analyticsCheck } from './analytics/index.js';
import { responseSpecs } from '../api/response-schemas.js';
import {
  providerListOperations,
  responseSchemasOf,
  summaryKeysOf,
  type AnyCheck,
} from '../kernel/check.js';
import {
  metricCatalog,
  type CONTROL_METRICS,
  type UNIVERSAL_METRICS,
} from '../metrics/definitions.js';
import { coverageCheck } from './coverage/index.js';
import { lifecycleCheck } from './lifecycle/index.js';
import { pingCheck } from './ping/index.js';
import { providersCheck } from './providers/index.js';
import { tlsCheck } from './tls/index.js';

export const CHECK_LIST = [
  pingCheck,
  lifecycleCheck,
  analyticsCheck,
  providersCheck,
  coverageCheck,
  tlsCheck,
] as const;

export type RegisteredCheck = (typeof CHECK_LIST)[number];
export type CheckName = RegisteredCheck['name'];

/** The names of every registered check, in registry order. */
export const CHECK_NAMES: readonly CheckName[] = CHECK_LIST.map((check) => check.name);

/** The registered checks by name. */
export const CHECKS: Readonly<Record<CheckName, AnyCheck>> = Object.fromEntries(
  CHECK_LIST.map((check) => [check.name, check]),
) as unknown as Record<CheckName, AnyCheck>;

/** The registered check called `name`, if any (for names that come from outside, e.g. argv). */
export function findCheck(name: string): AnyCheck | undefined {
  return (CHECK_LIST as readonly AnyCheck[]).find((check) => check.name === name);
}

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (
  x: infer I,
) => void
  ? I
  : never;

/** Every registered check's metric definitions, merged (keys are unique across checks). */
export type CheckMetricDefinitions = UnionToIntersection<RegisteredCheck['metrics']>;

/** The config of a registered check, by name. */
export type CheckConfigs = {
  [C in RegisteredCheck as C['name']]: ReturnType<C['config']['toConfig']>;
};

/** The summary keys of every registered check: each check's document carries them all. */
export const SUMMARY_KEYS: readonly string[] = summaryKeysOf(CHECK_LIST);

/** Every metric of this build by key, typed: for the dashboards, the rules and the tests. */
export const METRICS = metricCatalog(CHECK_LIST).definitions as typeof UNIVERSAL_METRICS &
  typeof CONTROL_METRICS &
  CheckMetricDefinitions;

/** The schema of each operation's successful answer, from the checks that call it. */
export const RESPONSE_SCHEMAS = responseSchemasOf(CHECK_LIST);

/** The operations whose answer is the provider list, from the checks that call them. */
export const PROVIDER_LISTS = providerListOperations(CHECK_LIST);

/** The spec's view of an operation's answers (or `error`), from the registered checks. */
export const responseSpecOf = responseSpecs(RESPONSE_SCHEMAS);
