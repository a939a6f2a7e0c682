/**
 * The scenario files of the rule tests (`alerts/tests/scenarios/*.yaml`, the monitor's, and
 * `src/checks/<name>/scenarios/*.yaml`, each check's): their schema and their per-minute
 * timelines. A scenario says what happened each minute (`10*ok 5*slow_critical`); this
 * module only reads that text. What an event means to the monitor is `check-results.ts`'s business,
 * and each check's `scenario-results.ts` for its own timeline.
 */
import { z } from 'zod';
import YAML from 'yaml';
import { parseDuration } from './durations.js';

import { NO_EVENT, expandTimeline } from '../../src/checks/shared/scenario.js';

export { NO_EVENT, expandTimeline };

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

const environmentSchema = z
  .object({
    ping: z.string().optional(),
    lifecycle: z.string().optional(),
    sessions: z.string().optional(),
    /** Sessions reported unrecoverable each minute (counted at m:50). */
    unrecoverable: z.string().optional(),
    /** Analytics run findings per minute; without it, analytics is disabled (no series). */
    analytics: z.string().optional(),
    /** Provider-list fetches: the number of providers listed, or `-` (no fetch that minute). */
    providers: z.string().optional(),
    /** Certificate checks: days left (`uN` untrusted, `mN` another host name), or `-`. */
    tls: z.string().optional(),
    /**
     * Confirmation pings on (`ping.confirm`), and what the API answers them: one ping event per
     * 10-second slot (`18*ok 6*slow_critical`, padded with ok). When they happen follows from the
     * scheduled pings (`confirm-sequence.ts`). Without it, confirmation is off.
     */
    confirm: z.string().optional(),
    /**
     * `isa_maintenance_active` per minute, set at m:00: 1 inside a maintenance window, 0 outside
     * (`10*0 20*1`, padded with 0). Without it the gauge stays 0, as the daemon exports it.
     */
    maintenance: z.string().optional(),
    /** Coverage runs: a result of `isa_coverage_runs_total` per minute, or `-`. */
    coverage: z.string().optional(),
    thresholds: z
      .object({ expected: z.number(), warning: z.number(), critical: z.number() })
      .strict()
      .optional(),
    interval: z.number().positive().optional(),
  })
  .strict();

/**
 * One monitor of a several-location scenario: its own scrape target (an instance of its own and
 * a `location` target label, as a scrape config sets it), its own state and its own timelines.
 */
const locationSchema = z
  .object({
    monitor: z.string().optional(),
    /** Where the `location` label comes from: a target label (default) or the config key. */
    label: z.enum(['target', 'config']).default('target'),
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
  );

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
export type EnvironmentSpec = z.infer<typeof environmentSchema>;
export type AlertCheck = z.infer<typeof alertCheckSchema>;
export type QueryCheck = z.infer<typeof queryCheckSchema>;
export type FiringEntry = z.infer<typeof firingSchema>;
/** The labels Prometheus adds to a target's series: job and instance, and any target label. */
export type Target = ScenarioFile['target'] & Record<string, string>;

/**
 * The monitors of a scenario, each with its scrape target: the one monitor at the file's target,
 * or one per location at instance port 9464, 9465, ... with a `location` target label.
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
      instance: `${host}:${9464 + i}`,
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

export const MONITOR_STATES = ['up', 'down', 'absent'] as const;
export type MonitorState = (typeof MONITOR_STATES)[number];

/** The monitor's state each minute: scraped (`up`), failing scrapes (`down`), no target. */
export function monitorTimeline(scenario: Scenario): MonitorState[] {
  return expandTimeline(scenario.monitor ?? '', scenarioMinutes(scenario), 'up').map((s) => {
    if (!(MONITOR_STATES as readonly string[]).includes(s)) {
      throw new Error(`unknown monitor state "${s}"; known: ${MONITOR_STATES.join(', ')}`);
    }
    return s as MonitorState;
  });
}
