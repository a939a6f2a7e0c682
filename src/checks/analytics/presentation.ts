/** How an analytics run is shown: its summary fields and trace lines. */
import { type Summary } from '../../kernel/check.js';
import type { AnalyticsFacts } from './facts.js';

/** The fields analytics adds to `check --json` and `/api/status`. */
export function analyticsSummary(facts: AnalyticsFacts | null): Summary {
  return {
    analytics_rows: facts === null ? null : String(facts.rows),
    ingest_awaiting: facts === null ? null : String(facts.awaiting),
  };
}

/** What analytics adds to the last line of the `check` trace. */
export function analyticsTrace(facts: AnalyticsFacts | null): string[] {
  return facts === null
    ? []
    : [
        `${facts.rows} rows in ${facts.pages} pages`,
        `${facts.ingestLagsMs.length} appeared, ${facts.awaiting} awaiting, ${facts.missing} missing`,
      ];
}
