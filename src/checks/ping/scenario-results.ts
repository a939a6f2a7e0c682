/**
 * The ping check in rule-test scenarios (src/checks/shared/scenario.ts): each event of its
 * timeline is a ping event of `PING_EVENTS` (`ok@0.6` overrides its duration) or `-` (no ping);
 * minutes the timeline does not cover are `ok`, so every environment pings. The ping of minute m
 * starts at m·60 + 1 s and finishes after its duration. Where the scenario gives `confirm`,
 * confirmation pings follow the scheduled ones as the daemon's follow-up policy sends them, each
 * answered by the event of its 10-second slot.
 *
 * Its keys in a scenario environment beside `ping`: `confirm` (confirmation pings on, as
 * `ping.confirm`, and what the API answers them: one ping event per 10-second slot,
 * `18*ok 6*slow_critical`, padded with ok; without it confirmation is off) and `interval` (the
 * ping interval in seconds, default 60). Pings run in every environment of a scenario.
 */
import { z } from 'zod';
import type { CheckResult } from '../../kernel/check.js';
import {
  NO_EVENT,
  expandTimeline,
  type ConfirmSequence,
  type PingOutcome,
  type RecordedEvent,
  type ScenarioResults,
  type ScheduledPing,
} from '../shared/scenario.js';
import { CONFIRM_TRIGGER_RESULTS, pingCheck, type PingFacts, type PingResult } from './index.js';

/** What one ping event is: its result, how long it took (timeouts at elapsed time), its status. */
export const PING_EVENTS: Readonly<
  Record<string, { result: PingResult; seconds: number; code: string }>
> = {
  ok: { result: 'ok', seconds: 0.05, code: '200' },
  slow_elevated: { result: 'ok', seconds: 0.3, code: '200' },
  slow_warning: { result: 'ok', seconds: 0.7, code: '200' },
  slow_critical: { result: 'ok', seconds: 2, code: '200' },
  // The 10 s timeout fires a little after 10 s, like the real thing: below the le="30" bound.
  timeout: { result: 'timeout', seconds: 10.001, code: 'none' },
  server_error: { result: 'server_error', seconds: 0.05, code: '500' },
  network_error: { result: 'network_error', seconds: 0.005, code: 'none' },
  unauthorized: { result: 'unauthorized', seconds: 0.05, code: '401' },
  rate_limited: { result: 'rate_limited', seconds: 0.05, code: '429' },
  unexpected_status: { result: 'unexpected_status', seconds: 0.05, code: '404' },
  invalid_body: { result: 'invalid_body', seconds: 0.05, code: '200' },
};

/** The ping check's own keys in a scenario environment (the header above). */
interface PingScenarioOptions {
  confirm: string;
  interval: number;
}

export const scenarioResults: ScenarioResults<PingScenarioOptions> = {
  sample: {
    ping: '10*ok 10*unauthorized 30*server_error 20*slow_critical',
    confirm: '60*ok 180*server_error 120*slow_critical',
  },
  options: { confirm: z.string().optional(), interval: z.number().positive().optional() },
  config: ({ options }) => ({
    interval: `${Math.round((options.interval ?? 60) * 1000)}ms`,
    // Confirmation pings only where the scenario says what the API answers them.
    confirm: { enabled: options.confirm !== undefined },
  }),
  events({ name: environment, timeline, minutes, thresholds, options, confirmSequence }) {
    const confirm = options.confirm;
    const events: RecordedEvent[] = [];
    const scheduled: Array<ScheduledPing & { ping: (typeof PING_EVENTS)[string] }> = [];
    const critical = thresholds?.critical ?? 1;
    expandTimeline(timeline ?? '', minutes, 'ok').forEach((event, m) => {
      const ping = pingEvent(event);
      if (!ping) return;
      const start = m * 60 + 1;
      const result = pingResult(environment, ping, start);
      events.push({ at: start + ping.seconds, record: (r) => r.recordResult(result) });
      scheduled.push({ start, ping, ...outcome(ping, critical) });
    });
    if (confirm !== undefined) {
      events.push(
        ...confirmationEvents(environment, confirm, scheduled, critical, minutes, confirmSequence),
      );
    }
    return events;
  },
};

/** How the paging rules see a ping event: slow, failed, and how long it ran. */
function outcome(ping: (typeof PING_EVENTS)[string], critical: number): PingOutcome {
  return {
    slow: ping.seconds > critical,
    failed: (CONFIRM_TRIGGER_RESULTS as readonly string[]).includes(ping.result),
    seconds: ping.seconds,
  };
}

/**
 * The confirmation pings and sequence events the daemon's policy makes of the scheduled pings,
 * each confirmation ping answered by the event of its 10-second slot in `slots`.
 */
function confirmationEvents(
  environment: string,
  slots: string,
  scheduled: ReadonlyArray<ScheduledPing>,
  critical: number,
  minutes: number,
  confirmSequence: ConfirmSequence,
): RecordedEvent[] {
  const answers = expandTimeline(slots, minutes * 6, 'ok');
  const answer = (t: number) => {
    const ping = pingEvent(answers[Math.floor(t / 10)] ?? 'ok') ?? PING_EVENTS['ok'];
    if (!ping) throw new Error('no ok ping event');
    return { ...outcome(ping, critical), ping };
  };
  const events: RecordedEvent[] = [];
  for (const e of confirmSequence(scheduled, answer)) {
    if (e.kind === 'run') {
      if (e.start >= minutes * 60) continue;
      const result = { ...pingResult(environment, e.outcome.ping, e.start), followUp: true };
      events.push({ at: e.start + e.outcome.seconds, record: (r) => r.recordResult(result) });
    } else {
      const event =
        e.kind === 'started'
          ? ({ type: 'started' } as const)
          : ({ type: 'ended', end: e.end } as const);
      events.push({
        at: e.at,
        record: (r) => r.recordFollowUp(environment, pingCheck.name, event),
      });
    }
  }
  return events;
}

/** A ping event's result and duration; `ok@0.6` overrides the duration of a named event. */
function pingEvent(event: string): (typeof PING_EVENTS)[string] | null {
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
  return { ...known, seconds };
}

function pingResult(
  environment: string,
  ping: (typeof PING_EVENTS)[string],
  startSeconds: number,
): CheckResult<PingFacts> {
  const ok = ping.result === 'ok';
  const durationMs = Math.round(ping.seconds * 1000);
  const facts: PingFacts = {
    result: ping.result,
    durationMs,
    phases: {},
    // No phases are simulated, so no connection is measured as opened either.
    connectionOpened: false,
    up: ok,
    latencyClass: null,
  };
  return {
    check: pingCheck.name,
    environment,
    outcome: ok ? 'pass' : 'fail',
    reason: ok ? null : ping.result,
    summary: pingCheck.summary(facts),
    startedAt: startSeconds * 1000,
    durationMs,
    steps: [],
    facts,
    responses: [{ operation: 'ping', code: ping.code }],
    contractChecks: [],
  };
}
