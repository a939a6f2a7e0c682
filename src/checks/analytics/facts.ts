/** What an analytics run finds: its bounded results and its facts. */

/** Result of one analytics run, most severe first when several apply. */
export const ANALYTICS_RESULTS = [
  'success',
  'sync_failed',
  'sync_incomplete',
  'lookup_failed',
  'campaign_mismatch',
  'sessions_missing',
  'unauthorized',
  'forbidden',
  'rate_limited',
  'error',
  'proxy_error',
] as const;

export type AnalyticsResult = (typeof ANALYTICS_RESULTS)[number];

export interface AnalyticsFacts {
  result: AnalyticsResult;
  /** Pages and rows this run read, successful sync or not. */
  pages: number;
  rows: number;
  /** Whole sync (first page to last), null when no page was requested. */
  syncDurationMs: number | null;
  syncSucceeded: boolean;
  /** The lag of each session that appeared in this run, in ms. */
  ingestLagsMs: number[];
  /** Sessions that became late (past the bound, appeared or not) in this run. */
  late: number;
  /** Sessions given up in this run (absent after `ingest_timeout`). */
  missing: number;
  /** Sessions still awaited after this run, and the age of the oldest (0 when none). */
  awaiting: number;
  oldestAwaitingMs: number;
}
