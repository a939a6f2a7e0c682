/**
 * The analytics check in rule-test scenarios (src/checks/shared/scenario.ts): each event of its
 * timeline is what a run found, `ok` (nothing new late or missing), `late` (a session became
 * late), `missing` (a session was given up), `late+missing`, or `-` (no run); a run of minute m
 * finishes at m·60 + 30 s.
 */
import type { CheckResult } from '../../kernel/check.js';
import {
  NO_EVENT,
  expandTimeline,
  type RecordedEvent,
  type ScenarioResults,
} from '../shared/scenario.js';
import { analyticsCheck, type AnalyticsFacts } from './index.js';

const ANALYTICS_EVENTS: Readonly<Record<string, { late: number; missing: number }>> = {
  ok: { late: 0, missing: 0 },
  late: { late: 1, missing: 0 },
  missing: { late: 0, missing: 1 },
  'late+missing': { late: 1, missing: 1 },
};

const ANALYTICS_SECONDS = 5;

export const scenarioResults: ScenarioResults = {
  sample: { analytics: '10*ok late 4*ok late 50*ok' },
  events({ name: environment, timeline, minutes }) {
    const events: RecordedEvent[] = [];
    expandTimeline(timeline ?? '', minutes, NO_EVENT).forEach((event, m) => {
      const found = analyticsEvent(event);
      if (!found) return;
      const finish = m * 60 + 30;
      const result = analyticsResult(environment, found, finish - ANALYTICS_SECONDS);
      events.push({ at: finish, record: (r) => r.recordResult(result) });
    });
    return events;
  },
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

function analyticsResult(
  environment: string,
  found: { late: number; missing: number },
  startSeconds: number,
): CheckResult<AnalyticsFacts> {
  const facts: AnalyticsFacts = {
    result: found.missing > 0 ? 'sessions_missing' : 'success',
    pages: 1,
    rows: 0,
    syncDurationMs: 100,
    syncSucceeded: true,
    ingestLagsMs: [],
    late: found.late,
    missing: found.missing,
    awaiting: 0,
    oldestAwaitingMs: 0,
  };
  return {
    check: analyticsCheck.name,
    environment,
    outcome: facts.result === 'success' ? 'pass' : 'fail',
    reason: facts.result === 'success' ? null : facts.result,
    summary: analyticsCheck.summary(facts),
    startedAt: startSeconds * 1000,
    durationMs: ANALYTICS_SECONDS * 1000,
    steps: [],
    facts,
    responses: [],
    contractChecks: [],
  };
}
