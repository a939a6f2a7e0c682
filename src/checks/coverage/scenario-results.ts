/**
 * The coverage check in rule-test scenarios (src/checks/shared/scenario.ts): each event of its
 * timeline is a result of isa_coverage_runs_total, or `-` (no run); a run of minute m finishes at
 * m·60 + 40 s.
 */
import type { CheckResult } from '../../kernel/check.js';
import {
  NO_EVENT,
  REFERENCE_SECONDS,
  expandTimeline,
  referenceResult,
  type RecordedEvent,
  type ScenarioResults,
} from '../shared/scenario.js';
import { COVERAGE_RESULTS, coverageCheck, type CoverageFacts, type CoverageResult } from './index.js';

export const scenarioResults: ScenarioResults = {
  sample: { coverage: 'ok 14*- below_expectation 14*- ok' },
  events({ name: environment, timeline, minutes }) {
    const events: RecordedEvent[] = [];
    expandTimeline(timeline ?? '', minutes, NO_EVENT).forEach((event, m) => {
      if (event === NO_EVENT) return;
      if (!(COVERAGE_RESULTS as readonly string[]).includes(event)) {
        throw new Error(
          `unknown coverage event "${event}"; known: ${COVERAGE_RESULTS.join(', ')}, -`,
        );
      }
      const found = event as CoverageResult;
      const result = coverageResult(environment, found, m * 60 + 40 - REFERENCE_SECONDS);
      events.push({ at: m * 60 + 40, record: (r) => r.recordResult(result) });
    });
    return events;
  },
};

function coverageResult(
  environment: string,
  result: CoverageResult,
  startSeconds: number,
): CheckResult<CoverageFacts> {
  const facts: CoverageFacts = {
    result,
    providers: null,
    matchedAreasViolation: null,
    refusalStatus: null,
  };
  return referenceResult(environment, coverageCheck, facts, startSeconds);
}
