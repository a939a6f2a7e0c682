/**
 * The scenario files of the rule tests (`alerts/tests/scenarios/*.yaml`, the monitor's, and
 * `src/checks/<name>/scenarios/*.yaml`, each check's): their schema and their per-minute
 * timelines. A scenario says what happened each minute (`10*ok 5*slow_critical`); this
 * module only reads that text. What an event means to the monitor is `check-results.ts`'s business,
 * and each check's `scenario-results.ts` for its own timeline.
 *
 * An environment's keys are the monitor's (below) and each registered check's: its timeline,
 * under the check's name, and the keys its `scenario-results.ts` declares (`options`), so a new
 * check's keys come from its folder.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import YAML from 'yaml';
import { parseDuration } from './durations.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import type { AnyCheck } from '../../src/kernel/check.js';
import {
  NO_EVENT,
  expandTimeline,
  type ScenarioResults,
} from '../../src/checks/shared/scenario.js';

export { NO_EVENT, expandTimeline };

/**
 * Each registered check's `scenario-results.ts` (src/checks/shared/scenario.ts), found by its
 * name in the registry, in registry order; a check without one has no scenario timeline.
 */
export const SCENARIO_RESULTS: ReadonlyArray<{ check: string; results: ScenarioResults }> =
  await Promise.all(
    (CHECK_LIST as readonly AnyCheck[])
      .map((check) => ({
        check: check.name,
        url: new URL(`../../src/checks/${check.name}/scenario-results.ts`, import.meta.url),
      }))
      .filter(({ url }) => existsSync(fileURLToPath(url)))
      .map(async ({ check, url }) => ({
        check,
        results: ((await import(url.href)) as { scenarioResults: ScenarioResults }).scenarioResults,
      })),
  );

const labelValue = z.union([z.string(), z.null()]);
const firingSchema = z
  .object({ value: z.number().optional() })
  .catchall(labelValue)
  .describe('expected alert: its labels (null drops a default) and its value');

const alertCheckSchema = z
  .object({
    at: z.string(),
    alert: z.string(),
    firing: z.array(firingSchema).default([]),
    why: z.string().optional(),
  })
  .strict();
const queryCheckSchema = z
  .object({
    at: z.string(),
    query: z.string(),
    samples: z.array(z.object({ labels: z.string(), value: z.number() }).strict()),
    why: z.string().optional(),
  })
  .strict();

/** The keys of a scenario environment that belong to the monitor, not to a check. */
const monitorEnvironmentKeys = {
  sessions: z.string().optional(),
  /** Sessions reported unrecoverable each minute (counted at m:50). */
  unrecoverable: z.string().optional(),
  /**
   * Open warning-severity contract differences of the provider list each minute, set at m:00
   * (`isa_contract_drift_differences`); without it the environment has no drift series.
   */
  drift_warnings: z.string().optional(),
  /**
   * `isa_maintenance_active` per minute, set at m:00: 1 inside a maintenance window, 0 outside
   * (`10*0 20*1`, padded with 0). Without it the gauge stays 0, as the daemon exports it.
   */
  maintenance: z.string().optional(),
  thresholds: z
    .object({ expected: z.number(), warning: z.number(), critical: z.number() })
    .strict()
    .optional(),
};

/**
 * Each check's keys: its timeline under its name (what it means: the check's
 * `scenario-results.ts`), and the keys of its own it declares. A key two owners claim is refused.
 */
function checkEnvironmentKeys(): Record<string, z.ZodType> {
  const keys: Record<string, z.ZodType> = {};
  const owners = new Map<string, string>(
    Object.keys(monitorEnvironmentKeys).map((key) => [key, 'the monitor']),
  );
  const claim = (key: string, owner: string, schema: z.ZodType) => {
    const other = owners.get(key);
    if (other) throw new Error(`scenario key "${key}" of ${owner} is already ${other}'s`);
    owners.set(key, owner);
    keys[key] = schema;
  };
  for (const { check, results } of SCENARIO_RESULTS) {
    claim(check, `the ${check} check`, z.string().optional());
    for (const [key, schema] of Object.entries(results.options ?? {})) {
      claim(key, `the ${check} check`, schema as z.ZodType);
    }
  }
  return keys;
}

/**
 * `every_check: true` gives the environment each registered check's `sample` timelines (its own
 * keys win), so a scenario over every rule keeps working as checks come and go.
 */
function withEveryCheck<E extends { every_check?: boolean | undefined }>(
  environment: E,
): Omit<E, 'every_check'> {
  const { every_check: every, ...given } = environment;
  if (every !== true) return given;
  const samples = SCENARIO_RESULTS.map(({ results }) => results.sample ?? {});
  return Object.assign({}, ...samples, given) as Omit<E, 'every_check'>;
}

const environmentSchema = z
  .object({
    ...monitorEnvironmentKeys,
    ...checkEnvironmentKeys(),
    /** Each registered check's sample timelines (`ScenarioResults.sample`). */
    every_check: z.boolean().optional(),
  })
  .strict()
  .transform(withEveryCheck) as unknown as z.ZodType<EnvironmentSpec>;

/**
 * One monitor of a several-location scenario: its own scrape target (an instance of its own, or
 * the one given, and a `location` target label, as a scrape config sets it), its own state and
 * its own timelines.
 */
const locationSchema = z
  .object({
    monitor: z.string().optional(),
    /**
     * Where the `location` label comes from: a target label (default; an agent's external label
     * gives the centre the same series) or the config key (then `up` has none).
     */
    label: z.enum(['target', 'config']).default('target'),
    /**
     * The monitor's `instance`; by default one of its own (port 9464, 9465, ...). Locations may
     * share one, as agents that each scrape `isa-monitor:9464` do (docs/deploy.md, "Many
     * locations"): only their `location` label tells them apart.
     */
    instance: z.string().optional(),
    /** Control probe results per minute (at m:30): 1 (ok), 0 (timeout) or `-`; absent: no control. */
    control: z.string().optional(),
    environments: z.record(z.string(), environmentSchema),
  })
  .strict();

const scenarioSchema = z
  .object({
    name: z.string(),
    /** How long the scenario runs; by default one minute past its last check. */
    minutes: z.number().int().positive().optional(),
    monitor: z.string().optional(),
    /** `isa_session_ledger_writable` per minute: 1 or 0 (default 1). */
    ledger: z.string().optional(),
    /** `prometheus3`: write `le` the way Prometheus 3 normalises it (`1.0`, `10.0`). */
    le_style: z.enum(['prometheus2', 'prometheus3']).default('prometheus2'),
    /** The environments of the one monitor; empty when `locations` gives several monitors. */
    environments: z.record(z.string(), environmentSchema).default({}),
    /** Several monitors watching the same environments from different places. */
    locations: z.record(z.string(), locationSchema).optional(),
    checks: z.array(z.union([alertCheckSchema, queryCheckSchema])).min(1),
  })
  .strict()
  .refine(
    (s) => (s.locations === undefined) !== (Object.keys(s.environments).length === 0),
    'give either environments (one monitor) or locations (several), not both',
  )
  .refine(
    (s) => !sharesInstanceWithoutLabel(s.locations ?? {}),
    'locations that share an instance need the location as a target label: their `up` series would be one',
  );

/** Whether two locations share an instance while one of them has no `location` on its `up`. */
function sharesInstanceWithoutLabel(
  locations: Record<string, { instance?: string | undefined; label: string }>,
): boolean {
  const given = Object.values(locations).filter((l) => l.instance !== undefined);
  return given.some(
    (l, i) => l.label === 'config' && given.some((o, j) => j !== i && o.instance === l.instance),
  );
}

const scenarioFileSchema = z
  .object({
    scrape_interval: z.string().default('15s'),
    evaluation_interval: z.string().default('15s'),
    target: z
      .object({ job: z.string(), instance: z.string() })
      .strict()
      .default({ job: 'isa-monitor', instance: '127.0.0.1:9464' }),
    scenarios: z.array(scenarioSchema).min(1),
  })
  .strict();

export type ScenarioFile = z.infer<typeof scenarioFileSchema>;
export type Scenario = z.infer<typeof scenarioSchema>;
/** A scenario environment: the monitor's keys typed, each check's keys as its folder reads them. */
export type EnvironmentSpec = z.infer<z.ZodObject<typeof monitorEnvironmentKeys>> &
  Readonly<Record<string, unknown>>;
export type AlertCheck = z.infer<typeof alertCheckSchema>;
export type QueryCheck = z.infer<typeof queryCheckSchema>;
export type FiringEntry = z.infer<typeof firingSchema>;
/** The labels Prometheus adds to a target's series: job and instance, and any target label. */
export type Target = ScenarioFile['target'] & Record<string, string>;

/**
 * The monitors of a scenario, each with its scrape target: the one monitor at the file's target,
 * or one per location at its `instance` (by default port 9464, 9465, ...) with a `location`
 * target label.
 */
export function scenarioMonitors(
  scenario: Scenario,
  target: ScenarioFile['target'],
): Array<{ monitor: Scenario; target: Target; location?: string; control?: string }> {
  if (scenario.locations === undefined) return [{ monitor: scenario, target }];
  const host = target.instance.replace(/:\d+$/, '');
  return Object.entries(scenario.locations).map(([location, spec], i) => ({
    monitor: {
      ...scenario,
      monitor: spec.monitor,
      environments: spec.environments,
      locations: undefined,
    },
    target: {
      ...target,
      instance: spec.instance ?? `${host}:${9464 + i}`,
      ...(spec.label === 'target' && { location }),
    },
    ...(spec.label === 'config' && { location }),
    ...(spec.control !== undefined && { control: spec.control }),
  }));
}

/** Parses and validates a scenario file; errors name the source and the key path. */
export function parseScenarioFile(text: string, source: string): ScenarioFile {
  const parsed = scenarioFileSchema.safeParse(YAML.parse(text));
  if (!parsed.success) throw new Error(`${source}: ${z.prettifyError(parsed.error)}`);
  const file = parsed.data;
  const scrapeMs = parseDuration(file.scrape_interval);
  if (scrapeMs % 1000 !== 0 || 60_000 % scrapeMs !== 0) {
    throw new Error(
      `scrape_interval must be whole seconds dividing a minute, got ${file.scrape_interval}`,
    );
  }
  return file;
}

export function isAlertCheck(check: Scenario['checks'][number]): check is AlertCheck {
  return 'alert' in check;
}

/** The scenario's length in minutes: as given, or one minute past its last check. */
export function scenarioMinutes(scenario: Scenario): number {
  if (scenario.minutes !== undefined) return scenario.minutes;
  const last = Math.max(...scenario.checks.map((c) => parseDuration(c.at)));
  return Math.floor(last / 60_000) + 1;
}

export const MONITOR_STATES = ['up', 'down', 'absent', 'cut'] as const;
export type MonitorState = (typeof MONITOR_STATES)[number];

/**
 * The monitor's state each minute: scraped (`up`), failing scrapes (`down`), no target
 * (`absent`: its series end with a staleness marker), or scraped by an agent cut off from the
 * Prometheus that evaluates the rules (`cut`: nothing arrives, not even a staleness marker, so
 * its last samples stay in the lookback; docs/deploy.md, "Many locations"). The monitor goes on
 * recording meanwhile; what the agent sends after it is back is not modelled here.
 */
export function monitorTimeline(scenario: Scenario): MonitorState[] {
  return expandTimeline(scenario.monitor ?? '', scenarioMinutes(scenario), 'up').map((s) => {
    if (!(MONITOR_STATES as readonly string[]).includes(s)) {
      throw new Error(`unknown monitor state "${s}"; known: ${MONITOR_STATES.join(', ')}`);
    }
    return s as MonitorState;
  });
}
