/**
 * The lifecycle check in rule-test scenarios (src/checks/shared/scenario.ts): each event of its
 * timeline is a `LifecycleResult` (or `-`, no run that minute); a run of minute m finishes at
 * m·60 + 50 s, after 20 s.
 */
import type { CheckResult } from '../../kernel/check.js';
import type { ContractResult } from '../../kernel/vocabulary.js';
import {
  NO_EVENT,
  expandTimeline,
  type RecordedEvent,
  type ScenarioResults,
} from '../shared/scenario.js';
import {
  LIFECYCLE_RESULTS,
  lifecycleCheck,
  type LifecycleFacts,
  type LifecycleResult,
  type QualifyOutcome,
} from './index.js';

/**
 * What the lifecycle check finds on the way to each result: the final qualify status (null when
 * the run ended before one was known) and the closed-session check (null when no close was
 * confirmed, so nothing was verified). These are the check's facts, not its metrics.
 */
const LIFECYCLE_FACTS: Readonly<
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
  budget: { qualify: null, closedGone: null },
  error: { qualify: null, closedGone: null },
  proxy_error: { qualify: null, closedGone: null },
};

const LIFECYCLE_SECONDS = 20;

/**
 * The answer that ended a refused run: its creation answered 401 or 429, which the credential
 * and rate-limit rules count over `isa_http_responses_total` (alerts/src/monitor.rules.yaml).
 */
const REFUSED_CREATE: Partial<Record<LifecycleResult, CheckResult['responses']>> = {
  unauthorized: [{ operation: 'create_session', code: '401' }],
  rate_limited: [{ operation: 'create_session', code: '429' }],
};

export const scenarioResults: ScenarioResults = {
  sample: { lifecycle: '3*(success 4*-) 3*(create_failed 4*-) 3*(success 4*-) 5*-' },
  // Runs are synthetic in a scenario, in every environment; the check only needs a valid section.
  config: () => ({ addresses: [{ street1: '2 Pending Ave', zip: '80202' }] }),
  events({ name: environment, timeline, minutes }) {
    const events: RecordedEvent[] = [];
    expandTimeline(timeline ?? '', minutes, NO_EVENT).forEach((event, m) => {
      const outcome = lifecycleEvent(event);
      if (!outcome) return;
      const finish = m * 60 + 50;
      const result = lifecycleResult(environment, outcome, finish - LIFECYCLE_SECONDS);
      events.push({ at: finish, record: (r) => r.recordResult(result) });
    });
    return events;
  },
};

function lifecycleEvent(event: string): LifecycleResult | null {
  if (event === NO_EVENT) return null;
  if (!(LIFECYCLE_RESULTS as readonly string[]).includes(event)) {
    throw new Error(
      `unknown lifecycle event "${event}"; known: ${LIFECYCLE_RESULTS.join(', ')}, -`,
    );
  }
  return event as LifecycleResult;
}

function lifecycleResult(
  environment: string,
  result: LifecycleResult,
  startSeconds: number,
): CheckResult<LifecycleFacts> {
  const found = LIFECYCLE_FACTS[result];
  const facts: LifecycleFacts = {
    result,
    qualifyOutcome: found.qualify,
    qualifyDurationMs: null,
    stepDurationsMs: {},
    pollStatuses: [],
    serviceDataSet: null,
  };
  return {
    check: lifecycleCheck.name,
    environment,
    outcome: result === 'success' ? 'pass' : 'fail',
    reason: result === 'success' ? null : result,
    summary: lifecycleCheck.summary(facts),
    startedAt: startSeconds * 1000,
    durationMs: LIFECYCLE_SECONDS * 1000,
    steps: [],
    facts,
    responses: REFUSED_CREATE[result] ?? [],
    contractChecks:
      found.closedGone === null ? [] : [{ check: 'closed_session_gone', result: found.closedGone }],
  };
}
