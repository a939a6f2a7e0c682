/** How a ping is shown: its summary fields, trace line, phases and status-page view. */
import { type Details, type PageView, type Summary } from '../../kernel/check.js';
import { PingFacts, phaseDurations } from './facts.js';

/** The fields ping adds to `check --json` and `/api/status`. */
export function pingSummary(facts: PingFacts | null): Summary {
  return {
    latency_class: facts?.latencyClass ?? null,
    connection: facts ? (facts.connectionOpened ? 'opened' : 'reused') : null,
  };
}

/** What ping adds to the last line of the `check` trace. */
export function pingTrace(facts: PingFacts | null): string[] {
  return facts?.latencyClass ? [`latency ${facts.latencyClass}`] : [];
}

/** The ping's phases, which the status page keeps and shows. */
export function pingDetails(facts: PingFacts | null): Details {
  return Object.fromEntries(
    phaseDurations(facts?.phases).map(([phase, ms]) => [`${phase}_ms`, ms]),
  );
}

/** The status page's view: the environment's headline state and the latency chart. */
export const PING_PAGE: PageView = { headline: { classKey: 'latency_class' }, latencyChart: true };
