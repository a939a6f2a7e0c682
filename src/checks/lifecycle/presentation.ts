/** How a lifecycle run is shown: its summary fields, trace line and status-page view. */
import { type Details, type PageView, type Summary } from '../../kernel/check.js';
import { LifecycleFacts } from './facts.js';

/** The fields lifecycle adds to `check --json` and `/api/status`. */
export function lifecycleSummary(facts: LifecycleFacts | null): Summary {
  return {
    qualify_status: facts?.qualifyOutcome ?? null,
    service_data_set: facts?.serviceDataSet ?? null,
  };
}

/** What lifecycle adds to the last line of the `check` trace. */
export function lifecycleTrace(facts: LifecycleFacts | null): string[] {
  return facts?.qualifyOutcome ? [`qualify_status ${facts.qualifyOutcome}`] : [];
}

/** The time to qualify, which the status page keeps and shows. */
export function lifecycleDetails(facts: LifecycleFacts | null): Details {
  return { qualify_ms: facts?.qualifyDurationMs ?? null };
}

/** The status page's view: a run timeline and the distribution of qualify outcomes. */
export const LIFECYCLE_PAGE: PageView = {
  timeline: true,
  distribution: {
    key: 'qualify_status',
    label: 'Qualify outcomes',
    durationKey: 'qualify_ms',
    durationLabel: 'Time to qualify',
  },
};
