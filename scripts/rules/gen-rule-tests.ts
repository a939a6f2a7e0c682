/**
 * Generates promtool rule tests (`alerts/tests/*.yaml`) from per-minute scenarios
 * (`alerts/tests/scenarios/*.yaml`).
 *
 * Writing counters by hand at 15 s resolution is error-prone: one ping a minute means four samples
 * per ping, and a histogram's buckets, count and sum must move together. A scenario instead says
 * what happened each minute (`10*ok 5*slow_critical`), and this script turns that into input
 * series in promtool's expanding notation, with every counter consistent, plus the expected
 * alerts with their annotations rendered the way Prometheus renders them.
 *
 * Time model: the ping of minute m starts at m·60 + 1 s and is visible from the first scrape at
 * or after it finished (start + its duration); a lifecycle run of minute m finishes at m·60 + 50 s.
 * Counters start at 0 (the monitor pre-initialises every label set); the last-attempt gauge is
 * absent until the first ping. A `down` minute fails the scrape (up = 0, every other series goes
 * stale); an `absent` minute has no target at all (no `up` either).
 *
 * Usage: `npx tsx scripts/rules/gen-rule-tests.ts` rewrites the generated files;
 * `npx tsx scripts/rules/gen-rule-tests.ts --check` only reports files that differ (exit 1).
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as prettier from 'prettier';
import { z } from 'zod';
import YAML from 'yaml';
import { analyticsCheck } from '../../src/checks/analytics.js';
import {
  LIFECYCLE_RESULTS,
  QUALIFY_OUTCOMES,
  type LifecycleResult,
  type QualifyOutcome,
} from '../../src/checks/lifecycle.js';
import {
  PING_BUCKETS,
  PING_RESULTS,
  THRESHOLD_LEVELS,
  type PingResult,
} from '../../src/checks/ping.js';
import { COVERAGE_RESULTS, type CoverageResult } from '../../src/checks/coverage.js';
import { PROVIDER_TYPES } from '../../src/checks/providers.js';
import { METRICS } from '../../src/metrics/definitions.js';
import { CONTRACT_RESULTS, type ContractResult } from '../../src/vocabulary.js';
import { formatDuration, parseDuration } from './durations.js';
import { renderTemplate } from './templates.js';

/** The repository root, from this file's location. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const RULES_PATH = 'alerts/isa-monitor.rules.yaml';
export const SCENARIO_DIR = 'alerts/tests/scenarios';
export const TESTS_DIR = 'alerts/tests';

// ---------------------------------------------------------------------------------------------
// Events

/** What one ping event means: its result and how long it took (timeouts at elapsed time). */
export const PING_EVENTS: Readonly<Record<string, { result: PingResult; seconds: number }>> = {
  ok: { result: 'ok', seconds: 0.05 },
  slow_elevated: { result: 'ok', seconds: 0.3 },
  slow_warning: { result: 'ok', seconds: 0.7 },
  slow_critical: { result: 'ok', seconds: 2 },
  // The 10 s timeout fires a little after 10 s: above the le="10" bucket, like the real thing.
  timeout: { result: 'timeout', seconds: 10.001 },
  server_error: { result: 'server_error', seconds: 0.05 },
  network_error: { result: 'network_error', seconds: 0.005 },
  unauthorized: { result: 'unauthorized', seconds: 0.05 },
  rate_limited: { result: 'rate_limited', seconds: 0.05 },
  unexpected_status: { result: 'unexpected_status', seconds: 0.05 },
  invalid_body: { result: 'invalid_body', seconds: 0.05 },
};
/** The event for "no ping this minute" (skipped, or the schedule is stuck). */
export const NO_EVENT = '-';

/** The qualify outcome and closed-session contract check a lifecycle result implies. */
const LIFECYCLE_IMPLIES: Readonly<
  Record<LifecycleResult, { qualify: QualifyOutcome | null; closedGone: ContractResult | null }>
> = {
  success: { qualify: 'available', closedGone: 'pass' },
  create_failed: { qualify: null, closedGone: null },
  qualify_failed: { qualify: 'failed', closedGone: 'pass' },
  qualify_timeout: { qualify: 'timeout', closedGone: 'pass' },
  unexpected_outcome: { qualify: 'no_service', closedGone: 'pass' },
  close_failed: { qualify: 'available', closedGone: null },
  not_gone_after_close: { qualify: 'available', closedGone: 'fail' },
  unauthorized: { qualify: null, closedGone: null },
  rate_limited: { qualify: null, closedGone: null },
  address_validation_unavailable: { qualify: null, closedGone: null },
  error: { qualify: null, closedGone: null },
};

const MONITOR_STATES = ['up', 'down', 'absent'] as const;
type MonitorState = (typeof MONITOR_STATES)[number];

// ---------------------------------------------------------------------------------------------
// Scenario files

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
    analytics: z.string().optional(),
    /** Provider-list fetches: the number of providers listed, or `-` (no fetch that minute). */
    providers: z.string().optional(),
    /** Coverage runs: a result of `isa_coverage_runs_total` per minute, or `-`. */
    coverage: z.string().optional(),
    thresholds: z
      .object({ expected: z.number(), warning: z.number(), critical: z.number() })
      .strict()
      .optional(),
    interval: z.number().positive().optional(),
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
    environments: z.record(z.string(), environmentSchema),
    checks: z.array(z.union([alertCheckSchema, queryCheckSchema])).min(1),
  })
  .strict();

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
type EnvironmentSpec = z.infer<typeof environmentSchema>;
type AlertCheck = z.infer<typeof alertCheckSchema>;

/**
 * Expands a timeline such as `10*ok 3*(slow_critical ok) -` into one event per minute, cut or
 * padded with `pad` to exactly `minutes`.
 */
export function expandTimeline(text: string, minutes: number, pad: string): string[] {
  const tokens = text.match(/\d+\*|\(|\)|[^\s()*]+/g) ?? [];
  let pos = 0;
  const parseSequence = (closing: boolean): string[] => {
    const events: string[] = [];
    while (pos < tokens.length) {
      let token = tokens[pos++] ?? '';
      if (token === ')') {
        if (!closing) throw new Error(`unbalanced ")" in timeline "${text}"`);
        return events;
      }
      let count = 1;
      if (/^\d+\*$/.test(token)) {
        count = Number(token.slice(0, -1));
        token = tokens[pos++] ?? '';
      }
      let item: string[];
      if (token === '(') item = parseSequence(true);
      else if (token === ')' || token === '')
        throw new Error(`repeat without an event in "${text}"`);
      else item = [token];
      for (let i = 0; i < count; i++) events.push(...item);
    }
    if (closing) throw new Error(`missing ")" in timeline "${text}"`);
    return events;
  };
  const events = parseSequence(false).slice(0, minutes);
  while (events.length < minutes) events.push(pad);
  return events;
}

/** A ping event's result and duration; `ok@0.6` overrides the duration of a named event. */
function pingEvent(event: string): { result: PingResult; seconds: number } | null {
  if (event === NO_EVENT) return null;
  const [name = '', override] = event.split('@');
  const known = PING_EVENTS[name];
  if (!known)
    throw new Error(
      `unknown ping event "${event}"; known: ${Object.keys(PING_EVENTS).join(', ')}, -`,
    );
  if (override === undefined) return known;
  const seconds = Number(override);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new Error(`bad duration in ping event "${event}"`);
  return { result: known.result, seconds };
}

/**
 * An analytics run's ingest findings: `ok` (nothing new), `late` (a session became late),
 * `missing` (a session was given up), `late+missing` (both).
 */
const ANALYTICS_EVENTS: Readonly<Record<string, { late: number; missing: number }>> = {
  ok: { late: 0, missing: 0 },
  late: { late: 1, missing: 0 },
  missing: { late: 0, missing: 1 },
  'late+missing': { late: 1, missing: 1 },
};

function analyticsEvent(event: string): { late: number; missing: number } | null {
  if (event === NO_EVENT) return null;
  const known = ANALYTICS_EVENTS[event];
  if (!known) {
    throw new Error(
      `unknown analytics event "${event}"; known: ${Object.keys(ANALYTICS_EVENTS).join(', ')}, -`,
    );
  }
  return known;
}

function lifecycleEvent(event: string): LifecycleResult | null {
  if (event === NO_EVENT) return null;
  if (!(LIFECYCLE_RESULTS as readonly string[]).includes(event)) {
    throw new Error(
      `unknown lifecycle event "${event}"; known: ${LIFECYCLE_RESULTS.join(', ')}, -`,
    );
  }
  return event as LifecycleResult;
}

// ---------------------------------------------------------------------------------------------
// Series

/** One input series: its label set and one value per scrape (null: no sample). */
interface Series {
  metric: string;
  labels: Record<string, string>;
  values: Array<number | null>;
}

interface PingEvent {
  result: PingResult;
  seconds: number;
  /** Seconds from the scenario start at which the attempt started (the last-attempt gauge). */
  start: number;
}

interface TimedEvent<T> {
  /** Seconds from the scenario start at which the effect is visible to a scrape. */
  visibleAt: number;
  data: T;
}

/**
 * Folds the matching events visible at each scrape. The returned function must be called with
 * increasing `t` (one pass over the scrapes of one series), which keeps long scenarios linear.
 */
function visibleFold<T, V>(
  events: ReadonlyArray<TimedEvent<T>>,
  match: (d: T) => boolean,
  initial: V,
  step: (acc: V, d: T) => V,
): (t: number) => V {
  const matching = events.filter((e) => match(e.data)).sort((a, b) => a.visibleAt - b.visibleAt);
  let i = 0;
  let acc = initial;
  return (t) => {
    for (; i < matching.length && (matching[i]?.visibleAt ?? Infinity) <= t; i++) {
      acc = step(acc, (matching[i] as TimedEvent<T>).data);
    }
    return acc;
  };
}

/** How many matching events are visible at each scrape (a counter). */
function visibleCount<T>(events: ReadonlyArray<TimedEvent<T>>, match: (d: T) => boolean) {
  return visibleFold(events, match, 0, (n) => n + 1);
}

/** The scenario's length in minutes: as given, or one minute past its last check. */
export function scenarioMinutes(scenario: Scenario): number {
  if (scenario.minutes !== undefined) return scenario.minutes;
  const last = Math.max(...scenario.checks.map((c) => parseDuration(c.at)));
  return Math.floor(last / 60_000) + 1;
}

/** Builds the input series of one scenario at `scrapeSeconds` resolution. */
export function buildSeries(
  scenario: Scenario,
  scrapeSeconds: number,
  target: { job: string; instance: string },
): Series[] {
  const minutes = scenarioMinutes(scenario);
  const times: number[] = [];
  for (let t = 0; t <= minutes * 60; t += scrapeSeconds) times.push(t);
  const monitor = expandTimeline(scenario.monitor ?? '', minutes, 'up').map((s) => {
    if (!(MONITOR_STATES as readonly string[]).includes(s)) {
      throw new Error(`unknown monitor state "${s}"; known: ${MONITOR_STATES.join(', ')}`);
    }
    return s as MonitorState;
  });
  const stateAt = (t: number): MonitorState =>
    monitor[Math.min(Math.floor(t / 60), minutes - 1)] ?? 'up';

  const series: Series[] = [];
  const add = (
    metric: string,
    labels: Record<string, string>,
    value: (t: number) => number | null,
  ) => series.push({ metric, labels: { ...labels, ...target }, values: times.map(value) });

  for (const [environment, spec] of Object.entries(scenario.environments)) {
    addEnvironmentSeries(add, environment, spec, minutes, scenario.le_style);
  }
  const up = times.map((t) => ({ up: 1, down: 0, absent: null })[stateAt(t)]);
  series.push({ metric: 'up', labels: { ...target }, values: up });
  add('process_start_time_seconds', {}, () => 0);
  const ledger = expandTimeline(scenario.ledger ?? '', minutes, '1').map(Number);
  add(
    METRICS.sessionLedgerWritable.name,
    {},
    (t) => ledger[Math.min(Math.floor(t / 60), minutes - 1)] ?? 1,
  );

  // A failed scrape marks every series of the target stale; `up` only disappears with the target.
  for (const s of series) {
    if (s.metric === 'up') continue;
    s.values = s.values.map((v, i) => (stateAt(times[i] ?? 0) === 'up' ? v : null));
  }
  return series;
}

type AddSeries = (
  metric: string,
  labels: Record<string, string>,
  value: (t: number) => number | null,
) => void;

function addEnvironmentSeries(
  add: AddSeries,
  environment: string,
  spec: EnvironmentSpec,
  minutes: number,
  leStyle: Scenario['le_style'],
) {
  const pings: Array<TimedEvent<PingEvent>> = [];
  expandTimeline(spec.ping ?? '', minutes, 'ok').forEach((event, m) => {
    const ping = pingEvent(event);
    if (!ping) return;
    const start = m * 60 + 1;
    pings.push({ visibleAt: start + ping.seconds, data: { ...ping, start } });
  });
  const runs: Array<TimedEvent<LifecycleResult>> = [];
  expandTimeline(spec.lifecycle ?? '', minutes, NO_EVENT).forEach((event, m) => {
    const result = lifecycleEvent(event);
    if (result) runs.push({ visibleAt: m * 60 + 50, data: result });
  });
  // An analytics run of minute m finishes at m·60 + 30 s.
  const analytics: Array<TimedEvent<{ late: number; missing: number }>> = [];
  expandTimeline(spec.analytics ?? '', minutes, NO_EVENT).forEach((event, m) => {
    const found = analyticsEvent(event);
    if (found) analytics.push({ visibleAt: m * 60 + 30, data: found });
  });
  const sessions = expandTimeline(spec.sessions ?? '', minutes, '0').map((v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`sessions must be whole numbers, got "${v}"`);
    return n;
  });
  const thresholds = spec.thresholds ?? { expected: 0.1, warning: 0.5, critical: 1 };
  const env = { environment };

  for (const result of PING_RESULTS) {
    add(
      METRICS.pingAttempts.name,
      { ...env, result },
      visibleCount(pings, (p) => p.result === result),
    );
  }
  const histogram = METRICS.pingDuration.name;
  for (const bound of [...PING_BUCKETS, Infinity]) {
    const le = leLabel(bound, leStyle);
    add(
      `${histogram}_bucket`,
      { ...env, le },
      visibleCount(pings, (p) => p.seconds <= bound),
    );
  }
  add(
    `${histogram}_count`,
    env,
    visibleCount(pings, () => true),
  );
  // Summed in whole milliseconds so the text has no floating-point noise.
  const sumMs = visibleFold(
    pings,
    () => true,
    0,
    (ms, p) => ms + Math.round(p.seconds * 1000),
  );
  add(`${histogram}_sum`, env, (t) => sumMs(t) / 1000);
  add(
    METRICS.pingLastAttempt.name,
    env,
    visibleFold<PingEvent, number | null>(
      pings,
      () => true,
      null,
      (_last, p) => p.start,
    ),
  );
  add(METRICS.pingInterval.name, env, () => spec.interval ?? 60);
  for (const level of THRESHOLD_LEVELS) {
    add(METRICS.latencyThreshold.name, { ...env, level }, () => thresholds[level]);
  }
  for (const result of LIFECYCLE_RESULTS) {
    add(
      METRICS.lifecycleRuns.name,
      { ...env, result },
      visibleCount(runs, (r) => r === result),
    );
  }
  for (const status of QUALIFY_OUTCOMES) {
    const implied = (r: LifecycleResult) => LIFECYCLE_IMPLIES[r].qualify === status;
    add(METRICS.qualifyOutcomes.name, { ...env, status }, visibleCount(runs, implied));
  }
  for (const result of CONTRACT_RESULTS) {
    const implied = (r: LifecycleResult) => LIFECYCLE_IMPLIES[r].closedGone === result;
    const labels = { ...env, check: 'closed_session_gone', result };
    add(METRICS.contractChecks.name, labels, visibleCount(runs, implied));
  }
  if (spec.analytics !== undefined) {
    // Series of an enabled check only, like the monitor itself.
    const sessionsLate = visibleFold(
      analytics,
      () => true,
      0,
      (n, a) => n + a.late,
    );
    const sessionsMissing = visibleFold(
      analytics,
      () => true,
      0,
      (n, a) => n + a.missing,
    );
    add(analyticsCheck.metrics.sessionsLate.name, env, sessionsLate);
    add(analyticsCheck.metrics.sessionsMissing.name, env, sessionsMissing);
  }
  add(
    METRICS.syntheticSessionsOpen.name,
    env,
    (t) => sessions[Math.min(Math.floor(t / 60), minutes - 1)] ?? 0,
  );
  const lost: Array<TimedEvent<number>> = [];
  expandTimeline(spec.unrecoverable ?? '', minutes, '0').forEach((v, m) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`unrecoverable must be whole numbers, got "${v}"`);
    if (n > 0) lost.push({ visibleAt: m * 60 + 50, data: n });
  });
  add(
    METRICS.syntheticSessionsUnrecoverable.name,
    env,
    visibleFold(
      lost,
      () => true,
      0,
      (sum, n) => sum + n,
    ),
  );
  if (spec.providers !== undefined) addProvidersSeries(add, env, spec.providers, minutes);
  if (spec.coverage !== undefined) addCoverageSeries(add, env, spec.coverage, minutes);
}

/**
 * The coverage run counter of a `coverage` timeline: a run of minute m finishes at m:40 with the
 * given result. Zero-initialised like the monitor does; written only for scenarios that have one.
 */
function addCoverageSeries(
  add: AddSeries,
  env: { environment: string },
  timeline: string,
  minutes: number,
) {
  const runs: Array<TimedEvent<CoverageResult>> = [];
  expandTimeline(timeline, minutes, NO_EVENT).forEach((event, m) => {
    if (event === NO_EVENT) return;
    if (!(COVERAGE_RESULTS as readonly string[]).includes(event)) {
      throw new Error(
        `unknown coverage event "${event}"; known: ${COVERAGE_RESULTS.join(', ')}, -`,
      );
    }
    runs.push({ visibleAt: m * 60 + 40, data: event as CoverageResult });
  });
  for (const result of COVERAGE_RESULTS) {
    add(
      METRICS.coverageRuns.name,
      { ...env, result },
      visibleCount(runs, (r) => r === result),
    );
  }
}

/**
 * The provider-list gauge of a `providers` timeline: a fetch of minute m is visible from m:30
 * and lists that many providers (all counted as `fcc_provider`); the gauge keeps its value
 * between fetches and is absent before the first. Written only for scenarios that have one.
 */
function addProvidersSeries(
  add: AddSeries,
  env: { environment: string },
  timeline: string,
  minutes: number,
) {
  const fetches: Array<TimedEvent<number>> = [];
  expandTimeline(timeline, minutes, NO_EVENT).forEach((event, m) => {
    if (event === NO_EVENT) return;
    const n = Number(event);
    if (!Number.isInteger(n) || n < 0) {
      throw new Error(`providers must be whole numbers or -, got "${event}"`);
    }
    fetches.push({ visibleAt: m * 60 + 30, data: n });
  });
  const listed = (type: string) =>
    visibleFold<number, number | null>(
      fetches,
      () => true,
      null,
      (_last, n) => (type === 'fcc_provider' ? n : 0),
    );
  for (const type of PROVIDER_TYPES) {
    add(METRICS.providersListed.name, { ...env, type }, listed(type));
  }
}

/** A bucket bound as prom-client writes it (`1`), or as Prometheus 3 normalises it (`1.0`). */
function leLabel(bound: number, style: Scenario['le_style']): string {
  if (bound === Infinity) return '+Inf';
  return style === 'prometheus3' && Number.isInteger(bound) ? `${bound}.0` : String(bound);
}

/** `metric{a="1",b="2"}` with label names sorted, as Prometheus prints series. */
export function seriesSelector(metric: string, labels: Readonly<Record<string, string>>): string {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`);
  return `${metric}{${parts.join(',')}}`;
}

function formatNumber(n: number): string {
  return String(Number(n.toFixed(6)));
}

/**
 * Writes values in promtool's expanding notation: `a+bxn` (n+1 values from a in steps of b),
 * `axn` (a, n+1 times), `_` / `_xn` (n missing samples) and `stale` (the first missing sample
 * after a present one, as a failed scrape writes it).
 */
export function expandingNotation(values: ReadonlyArray<number | null>): string {
  const out: string[] = [];
  let i = 0;
  while (i < values.length) {
    const v = values[i];
    if (v === null || v === undefined) {
      let j = i;
      const previous = i > 0 ? values[i - 1] : null;
      if (previous !== null && previous !== undefined) {
        out.push('stale');
        j++;
      }
      let missing = 0;
      while (j < values.length && values[j] === null) {
        missing++;
        j++;
      }
      if (missing === 1) out.push('_');
      else if (missing > 1) out.push(`_x${missing}`);
      i = j;
      continue;
    }
    const next = values[i + 1];
    if (next === null || next === undefined) {
      out.push(formatNumber(v));
      i++;
      continue;
    }
    const j = progressionEnd(values, i);
    // A two-value progression that cuts into a longer one (0 1 1 1 1) reads better as `0 1x3`.
    if (j === i + 1 && progressionEnd(values, i + 1) > i + 2) {
      out.push(formatNumber(v));
      i++;
      continue;
    }
    const step = next - v;
    const n = j - i;
    const stepText = formatNumber(Math.abs(step));
    if (Number(stepText) === 0) out.push(`${formatNumber(v)}x${n}`);
    else out.push(`${formatNumber(v)}${step < 0 ? '-' : '+'}${stepText}x${n}`);
    i = j + 1;
  }
  return out.join(' ');
}

/** The last index of the arithmetic progression of present values starting at `i`. */
function progressionEnd(values: ReadonlyArray<number | null>, i: number): number {
  const first = values[i];
  const second = values[i + 1];
  if (first === null || first === undefined || second === null || second === undefined) return i;
  const step = second - first;
  let j = i + 1;
  while (j + 1 < values.length) {
    const a = values[j];
    const b = values[j + 1];
    if (a === null || a === undefined || b === null || b === undefined) break;
    if (Math.abs(b - a - step) > 1e-9) break;
    j++;
  }
  return j;
}

// ---------------------------------------------------------------------------------------------
// Expected alerts

interface AlertRule {
  alert: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** The alerting rules of a rules file, for rendering expected labels and annotations. */
export function alertRules(rulesText: string): AlertRule[] {
  const doc = YAML.parse(rulesText) as {
    groups?: Array<{ rules?: Array<Partial<AlertRule> & { record?: string }> }>;
  };
  const rules: AlertRule[] = [];
  for (const group of doc.groups ?? []) {
    for (const rule of group.rules ?? []) {
      if (typeof rule.alert !== 'string') continue;
      rules.push({
        alert: rule.alert,
        labels: rule.labels ?? {},
        annotations: rule.annotations ?? {},
      });
    }
  }
  return rules;
}

/** The rule groups of a rules file, in file order. */
export function groupNames(rulesText: string): string[] {
  const doc = YAML.parse(rulesText) as { groups?: Array<{ name?: string }> };
  return (doc.groups ?? []).map((g) => String(g.name));
}

function expectedAlert(
  check: AlertCheck,
  entry: z.infer<typeof firingSchema>,
  rules: readonly AlertRule[],
  target: Readonly<Record<string, string>>,
) {
  const { value, ...given } = entry;
  const labels: Record<string, string> = { ...target };
  for (const [name, v] of Object.entries(given)) {
    if (v === null) delete labels[name];
    else if (typeof v === 'string') labels[name] = v;
  }
  const candidates = rules.filter(
    (r) =>
      r.alert === check.alert &&
      Object.entries(r.labels).every(([k, v]) => labels[k] === undefined || labels[k] === v),
  );
  if (candidates.length !== 1) {
    throw new Error(
      `alert ${check.alert} at ${check.at}: ${candidates.length} rules match ${JSON.stringify(labels)}; give labels that pick exactly one`,
    );
  }
  const rule = candidates[0] as AlertRule;
  // $labels in a template are the expression's output labels: the rule's own labels come later.
  const exprLabels = Object.fromEntries(
    Object.entries(labels).filter(([k]) => !(k in rule.labels)),
  );
  const annotations: Record<string, string> = {};
  for (const [name, template] of Object.entries(rule.annotations)) {
    annotations[name] = renderTemplate(template, { labels: exprLabels, value });
  }
  return {
    exp_labels: sortKeys({ ...labels, ...rule.labels }),
    exp_annotations: sortKeys(annotations),
  };
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

// ---------------------------------------------------------------------------------------------
// Test files

export interface GenerateOptions {
  /** Path of the rules file relative to the generated test file (promtool resolves it so). */
  ruleFile: string;
  /** Path of the scenario file, for the header. */
  source: string;
}

/**
 * Turns one scenario file into the text of one promtool test file, formatted by Prettier with the
 * repository's settings so `prettier --check` and the generator agree.
 */
export async function generateRuleTests(
  scenarioText: string,
  rulesText: string,
  options: GenerateOptions,
): Promise<string> {
  const parsed = scenarioFileSchema.safeParse(YAML.parse(scenarioText));
  if (!parsed.success) throw new Error(`${options.source}: ${z.prettifyError(parsed.error)}`);
  const file = parsed.data;
  const scrapeMs = parseDuration(file.scrape_interval);
  if (scrapeMs % 1000 !== 0 || 60_000 % scrapeMs !== 0) {
    throw new Error(
      `scrape_interval must be whole seconds dividing a minute, got ${file.scrape_interval}`,
    );
  }
  const rules = alertRules(rulesText);
  const doc = new YAML.Document({
    rule_files: [options.ruleFile],
    evaluation_interval: formatDuration(parseDuration(file.evaluation_interval)),
    // promtool evaluates groups in random order unless told; Prometheus runs them concurrently.
    // File order makes the tests deterministic.
    group_eval_order: groupNames(rulesText),
    tests: file.scenarios.map((scenario) => {
      const series = buildSeries(scenario, scrapeMs / 1000, file.target);
      const alertChecks = scenario.checks.filter((c): c is AlertCheck => 'alert' in c);
      const queryChecks = scenario.checks.filter((c) => 'query' in c);
      return {
        name: scenario.name,
        interval: formatDuration(scrapeMs),
        input_series: series.map((s) => ({
          series: seriesSelector(s.metric, s.labels),
          values: expandingNotation(s.values),
        })),
        ...(alertChecks.length > 0 && {
          alert_rule_test: alertChecks.map((c) => ({
            eval_time: formatDuration(parseDuration(c.at)),
            alertname: c.alert,
            exp_alerts: c.firing.map((entry) => expectedAlert(c, entry, rules, file.target)),
          })),
        }),
        ...(queryChecks.length > 0 && {
          promql_expr_test: queryChecks.map((c) => ({
            expr: c.query,
            eval_time: formatDuration(parseDuration(c.at)),
            exp_samples: c.samples,
          })),
        }),
      };
    }),
  });
  // Carry each check's reason into the generated file, where a failing test is read.
  file.scenarios.forEach((scenario, i) => {
    for (const kind of ['alert_rule_test', 'promql_expr_test'] as const) {
      const checks = scenario.checks.filter((c) =>
        kind === 'alert_rule_test' ? 'alert' in c : 'query' in c,
      );
      checks.forEach((c, j) => {
        const node = doc.getIn(['tests', i, kind, j], true);
        if (c.why && YAML.isNode(node)) node.commentBefore = ` ${c.why}`;
      });
    }
  });
  doc.commentBefore =
    ` Generated by scripts/rules/gen-rule-tests.ts from ${options.source}; do not edit.\n` +
    ' Regenerate: npx tsx scripts/rules/gen-rule-tests.ts\n' +
    ` Run: promtool test rules ${TESTS_DIR}/*.yaml`;
  const config = await prettier.resolveConfig(join(REPO_ROOT, TESTS_DIR, 'generated.yaml'));
  return prettier.format(doc.toString({ lineWidth: 0 }), { ...config, parser: 'yaml' });
}

/** The test file generated from every scenario file, keyed by repository-relative path. */
export async function generateAll(root: string = REPO_ROOT): Promise<Map<string, string>> {
  const rulesText = readFileSync(join(root, RULES_PATH), 'utf8');
  const out = new Map<string, string>();
  const scenarioDir = join(root, SCENARIO_DIR);
  for (const name of readdirSync(scenarioDir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const source = join(SCENARIO_DIR, name);
    const target = join(TESTS_DIR, basename(name));
    const text = await generateRuleTests(readFileSync(join(root, source), 'utf8'), rulesText, {
      ruleFile: relative(dirname(target), RULES_PATH),
      source,
    });
    out.set(target, text);
  }
  return out;
}

async function main(argv: readonly string[]): Promise<number> {
  const check = argv.includes('--check');
  let differing = 0;
  for (const [path, text] of await generateAll()) {
    const absolute = join(REPO_ROOT, path);
    let current: string | null = null;
    try {
      current = readFileSync(absolute, 'utf8');
    } catch {
      current = null;
    }
    if (current === text) continue;
    differing++;
    if (check)
      console.error(`${path} is out of date; run: npx tsx scripts/rules/gen-rule-tests.ts`);
    else {
      writeFileSync(absolute, text);
      console.log(`wrote ${path}`);
    }
  }
  return check && differing > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2));
}
