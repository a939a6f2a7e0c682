/**
 * The rule-test scenarios' side of a check (docs/alerts.md, "Tests"): what a check's folder
 * gives the rule-test generator (scripts/rules/gen-rule-tests.ts) so that the events of its
 * timeline in a scenario (`lifecycle: 3*success qualify_timeout`) become the check results a real
 * run would produce. Each check's `scenario-results.ts` exports `scenarioResults`; the generator
 * finds it by the check's name in the registry.
 *
 * Design-time only: nothing the daemon runs imports this module or a `scenario-results.ts`, so
 * the bundle (scripts/build.mjs, from src/cli.ts) leaves them out.
 */
import type { z } from 'zod';
import type { CheckResult, FollowUpEvent } from '../../kernel/check.js';

/** The event for "nothing this minute" (no ping, no finished lifecycle run). */
export const NO_EVENT = '-';

/** What a scenario event records: the daemon's recorder, as far as a check's results reach it. */
export interface ScenarioRecorder {
  recordResult(result: CheckResult): void;
  recordFollowUp(environment: string, check: string, event: FollowUpEvent): void;
}

/** Something the daemon records at scenario second `at` (the scenario starts at Unix time 0). */
export interface RecordedEvent {
  at: number;
  record(recorder: ScenarioRecorder): void;
}

/** One ping's outcome as the paging rules see it. */
export interface PingOutcome {
  /** Slower than the critical threshold (timeouts included). */
  slow: boolean;
  /** A server error, a timeout or a network error. */
  failed: boolean;
  /** How long it ran. */
  seconds: number;
}

export interface ScheduledPing extends PingOutcome {
  start: number;
}

/** A follow-up sequence's events: `run` is one confirmation ping (a follow-up run). */
export type ConfirmEvent<T> =
  | { kind: 'run'; start: number; outcome: T }
  | { kind: 'started'; at: number }
  | { kind: 'ended'; at: number; end: 'recovered' | 'window_elapsed' };

/**
 * The daemon's follow-up state machine driven on a number clock (scripts/rules/confirm-sequence.ts):
 * the confirmation pings and sequence events that `scheduled` pings cause, each confirmation ping
 * answered by `answer(t)`. Handed in by the generator, so no check folder imports the scheduler.
 */
export type ConfirmSequence = <T extends PingOutcome>(
  scheduled: ReadonlyArray<ScheduledPing>,
  answer: (t: number) => T,
) => Array<ConfirmEvent<T>>;

/**
 * One environment of a scenario, as a check reads it: its timeline and the values of the keys of
 * its own (`options`) that the scenario gives.
 */
export interface ScenarioSetting<O = Record<string, unknown>> {
  name: string;
  /** The check's timeline in this environment (its key in the scenario), if any. */
  timeline: string | undefined;
  /** The values of the check's own keys (`ScenarioResults.options`) in this environment. */
  options: Partial<O>;
}

/** One environment of a scenario, as a check's timeline is read in it. */
export interface ScenarioEnvironment<O = Record<string, unknown>> extends ScenarioSetting<O> {
  minutes: number;
  /** The environment's latency thresholds in seconds, when the scenario sets them. */
  thresholds?: { expected: number; warning: number; critical: number } | undefined;
  /** How the daemon sends confirmation pings after scheduled ones. */
  confirmSequence: ConfirmSequence;
}

/**
 * A check's side of the rule-test scenarios: the keys it adds to a scenario environment, its config
 * section there, and its timeline's events. The scenario schema (scripts/rules/scenarios.ts) and
 * the environments' configuration are assembled from these, so the generator names no check.
 */
export interface ScenarioResults<O = Record<string, unknown>> {
  /**
   * Keys of its own beside its timeline (the key named after the check), each with its schema;
   * a scenario gives them per environment (ping: `confirm`, what confirmation pings are answered).
   */
  options?: { readonly [K in keyof O]-?: z.ZodType<O[K] | undefined> };
  /**
   * A timeline that gives every series of the check (its own keys included), for the scenarios
   * that must evaluate every rule over every registered check (`every_check: true` in an
   * environment), so such a scenario names no check.
   */
  sample?: Readonly<Record<string, string>>;
  /**
   * The check's config section in a scenario environment, validated by the daemon's own config
   * validation with the rest of the file. Without it the check is enabled exactly where the
   * scenario gives its timeline (`{ enabled: timeline !== undefined }`).
   */
  config?(setting: ScenarioSetting<O>): Record<string, unknown>;
  /** Its timeline's events, as the recorder receives them. */
  events(environment: ScenarioEnvironment<O>): RecordedEvent[];
}

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

/** A timeline value that must be a whole number; `also` names what else the key accepts. */
export function wholeNumber(key: string, value: string, also = ''): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new Error(`${key} must be whole numbers${also}, got "${value}"`);
  }
  return n;
}

/** How long a reference check's run (providers, coverage) takes in a scenario. */
export const REFERENCE_SECONDS = 1;

/** The result of a reference check's run whose facts say `ok` or why not, started at `startSeconds`. */
export function referenceResult<F extends { result: string }>(
  environment: string,
  check: { name: string; summary(facts: F | null): CheckResult['summary'] },
  facts: F,
  startSeconds: number,
): CheckResult<F> {
  const ok = facts.result === 'ok';
  return {
    check: check.name,
    environment,
    outcome: ok ? 'pass' : 'fail',
    reason: ok ? null : facts.result,
    summary: check.summary(facts),
    startedAt: startSeconds * 1000,
    durationMs: REFERENCE_SECONDS * 1000,
    steps: [],
    facts,
    responses: [],
    contractChecks: [],
  };
}
