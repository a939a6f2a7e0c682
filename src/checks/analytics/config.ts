/**
 * The analytics check's configuration: how far back and how much it reads, the ingest-lag bound
 * and timeout, within the API's analytics limit (docs/configuration.md, "analytics").
 */
import { z } from 'zod';
import { positiveDuration, shorterThan, type Issues, type Loose } from '../../config/rules.js';
import { checkSection, type CheckConfigBase } from '../../config/section.js';

/** The API's analytics limit: requests per minute per client, on top of the global one. */
export const ANALYTICS_REQUESTS_PER_MINUTE = 60;

export interface AnalyticsConfig extends CheckConfigBase {
  /** How far back the first sync after start-up reaches (no earlier sync is known). */
  initialWindowMs: number;
  maxPages: number;
  maxLookups: number;
  /** A session that takes longer than this to appear is late (counted once). */
  ingestLagBoundMs: number;
  /** A session not seen after this long is missing and is no longer looked up. */
  ingestTimeoutMs: number;
}

/**
 * Every 60-second window holds requests of at most floor(60 s / interval) + 1 runs (runs start at
 * least an interval apart and never overlap); each makes at most max_pages + max_lookups.
 */
function withinAnalyticsLimit(v: Loose, issues: Issues): void {
  const { interval, max_pages: pages, max_lookups: lookups } = v;
  if (typeof interval !== 'number' || typeof pages !== 'number' || typeof lookups !== 'number')
    return;
  const runs = Math.floor(60_000 / interval) + 1;
  const worst = runs * (pages + lookups);
  if (worst > ANALYTICS_REQUESTS_PER_MINUTE) {
    issues.addIssue({
      code: 'custom',
      path: ['max_pages'],
      message: `with analytics.interval and max_lookups, allows ${worst} analytics requests in a minute: the API allows ${ANALYTICS_REQUESTS_PER_MINUTE} (keep (max_pages + max_lookups) × ${runs} at most ${ANALYTICS_REQUESTS_PER_MINUTE})`,
    });
  }
}

export const section = checkSection({
  name: 'analytics',
  // Off unless configured: see docs/configuration.md ("analytics").
  defaults: { enabled: false, interval: '1m', timeout: '45s', requestTimeout: '10s' },
  shape: {
    initial_window: positiveDuration().prefault('1h'),
    max_pages: z.number().int().min(1).max(50).default(10),
    max_lookups: z.number().int().min(0).max(50).default(5),
    // Deprecated and ignored (see `deprecated` below); still accepted so older files load.
    campaign_id: z.string().min(1).max(100).optional(),
    ingest_lag_bound: positiveDuration().prefault('5m'),
    ingest_timeout: positiveDuration().prefault('30m'),
  },
  docs: {
    summary:
      'the analytics check: the incremental sync of `GET /analytics/sessions` and the ingest lag of synthetic sessions. See [The analytics check](#the-analytics-check-environmentsanalytics)',
    keys: {
      enabled: { meaning: 'off unless configured (see below)' },
      interval: { meaning: 'see the analytics limit below' },
      timeout: { meaning: 'bounds the whole run' },
      request_timeout: { meaning: 'each page and each lookup' },
      initial_window: {
        type: 'duration',
        meaning:
          'greater than 0; how far back the first sync after start-up reaches (`updated_since` = start − this), kept until a sync succeeds',
      },
      max_pages: {
        type: 'integer',
        meaning:
          '1–50; a sync with more pages fails as `sync_incomplete` and is repeated from the same point',
      },
      max_lookups: {
        type: 'integer',
        meaning: '0–50; synthetic sessions looked up per run, oldest first',
      },
      campaign_id: {
        type: 'string',
        default: '(none)',
        meaning:
          '**deprecated and ignored**: a file that sets it still loads, with a warning. Each synthetic session is compared with the `campaign_id` it was created with (`lifecycle.campaign_id`), which the monitor remembers per session',
      },
      ingest_lag_bound: {
        type: 'duration',
        meaning:
          'greater than 0, shorter than `analytics.ingest_timeout`; a session not in analytics by then is counted late (`IsaAnalyticsIngestLagging`)',
      },
      ingest_timeout: {
        type: 'duration',
        meaning:
          'greater than 0; a session not in analytics by then is counted missing and no longer looked up',
      },
    },
  },
  deprecated: {
    campaign_id:
      'deprecated and ignored: each session is compared with the campaign_id it was created with (lifecycle.campaign_id); remove this key',
  },
  refine(v, issues) {
    shorterThan(v, issues, 'ingest_lag_bound', 'ingest_timeout', 'analytics');
    withinAnalyticsLimit(v, issues);
  },
  toConfig: (p) => ({
    initialWindowMs: p.initial_window,
    maxPages: p.max_pages,
    maxLookups: p.max_lookups,
    ingestLagBoundMs: p.ingest_lag_bound,
    ingestTimeoutMs: p.ingest_timeout,
  }),
});
