/**
 * The providers check in rule-test scenarios (src/checks/shared/scenario.ts): each event of its
 * timeline is how many providers a fetch listed (`9 14*- 7`), or `-` (no fetch); a fetch of
 * minute m finishes at m·60 + 30 s.
 */
import type { CheckResult } from '../../kernel/check.js';
import {
  NO_EVENT,
  REFERENCE_SECONDS,
  expandTimeline,
  referenceResult,
  wholeNumber,
  type RecordedEvent,
  type ScenarioResults,
} from '../shared/scenario.js';
import { providersCheck, type ProvidersFacts } from './index.js';

export const scenarioResults: ScenarioResults = {
  sample: { providers: '9 14*- 9 14*- 7 14*- 7 14*- 7' },
  events({ name: environment, timeline, minutes }) {
    const events: RecordedEvent[] = [];
    expandTimeline(timeline ?? '', minutes, NO_EVENT).forEach((event, m) => {
      if (event === NO_EVENT) return;
      const n = wholeNumber('providers', event, ' or -');
      const result = providersResult(environment, n, m * 60 + 30 - REFERENCE_SECONDS);
      events.push({ at: m * 60 + 30, record: (r) => r.recordResult(result) });
    });
    return events;
  },
};

/** A provider-list fetch that listed `n` providers, all counted as FCC providers. */
function providersResult(
  environment: string,
  n: number,
  startSeconds: number,
): CheckResult<ProvidersFacts> {
  const facts: ProvidersFacts = {
    result: n === 0 ? 'empty' : 'ok',
    counts: { fcc_provider: n, supplemental_brand: 0 },
    listHash: null,
    changed: false,
    violation: null,
  };
  return referenceResult(environment, providersCheck, facts, startSeconds);
}
