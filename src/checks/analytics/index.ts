/**
 * The analytics check: the partner's reporting pipeline, end to end.
 *
 * - **Incremental sync**, as the spec prescribes: `GET /analytics/sessions` with `updated_since`
 *   set to the last successful sync, every page. The next sync starts from the first page's
 *   `meta.responded_at` (the API's clock, so the monitor's clock skew cannot open a gap); a sync
 *   that fails or needs more than `max_pages` pages is not successful and is repeated from the
 *   same point. Rows and pages are counted; nothing is stored.
 * - **Ingest lag**: every synthetic session this environment created (the session journal, fed by
 *   whichever check creates sessions) is looked up with `GET /analytics/sessions/{token}` once per
 *   run, oldest first and at most `max_lookups` a run, until it appears (a 404 means "not yet").
 *   The time from creation to first appearance is the lag; a session still absent after
 *   `ingest_timeout` is counted missing and no longer looked up. The appearing row's
 *   `campaign_id` must be the one the session was created with, as the journal recorded it
 *   (contract check `analytics_campaign_id`): no setting of this check repeats it, so a healthy
 *   API never fails the check whatever the lifecycle's `campaign_id` is.
 *
 * The API allows 60 analytics requests a minute per client. A run makes at most
 * `max_pages + max_lookups` of them and runs never overlap, so the configuration rule in config.ts keeps
 * every 60-second window within the limit; a 429 ends the run at once.
 */
import { ANALYTICS_OPERATIONS } from './endpoint.js';
import { defineCheck } from '../../kernel/check.js';
import { section } from './config.js';
import { metrics, recordAnalytics, describeAnalytics } from './metrics.js';
import { runAnalytics } from './run.js';
import { analyticsSummary, analyticsTrace } from './presentation.js';

export { ANALYTICS_RESULTS, type AnalyticsResult, type AnalyticsFacts } from './facts.js';
export { ANALYTICS_REQUESTS_PER_MINUTE, type AnalyticsConfig } from './config.js';
export { SYNC_BUCKETS, INGEST_LAG_BUCKETS } from './metrics.js';

export const analyticsCheck = defineCheck({
  name: 'analytics',
  config: section,
  metrics,
  operations: ANALYTICS_OPERATIONS,
  contractChecks: ['analytics_campaign_id', 'response_schema'],
  summaryKeys: ['analytics_rows', 'ingest_awaiting'],
  run: runAnalytics,
  summary: analyticsSummary,
  trace: analyticsTrace,
  record: recordAnalytics,
  describeConfig: describeAnalytics,
});
