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
 * `max_pages + max_lookups` of them and runs never overlap, so the configuration rule below keeps
 * every 60-second window within the limit; a 429 ends the run at once.
 */
import { initialResults } from '../shared/request.js';
import { z } from 'zod';
import type { ApiResponse } from '../../api/client.js';
import { analyticsDetailResponseSchema, analyticsListResponseSchema } from '../../api/schemas.js';
import { positiveDuration, shorterThan, type Issues, type Loose } from '../../config/rules.js';
import { checkSection, type CheckConfigBase } from '../../config/section.js';
import { defineCheck, type CheckContext, type CheckOutcome } from '../../kernel/check.js';
import { checkResponseSchema } from '../shared/contract.js';
import { getAnalyticsSession, listAnalyticsSessions } from './request.js';

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

/** The API's analytics limit: requests per minute per client, on top of the global one. */
export const ANALYTICS_REQUESTS_PER_MINUTE = 60;

/** Sync durations: one page is tens of ms, a long sync paced by a 1/s budget tens of seconds. */
export const SYNC_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;
/** Ingest lag: seconds for a live pipeline, up to an hour for a stalled one. */
export const INGEST_LAG_BUCKETS = [5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600] as const;

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

/** A synthetic session awaited in analytics. */
interface Awaited {
  token: string;
  /** The `campaign_id` the session was created with (null: none). */
  campaignId: string | null;
  createdAt: number;
  late: boolean;
}

/** What the check keeps between runs, per environment (memory only). */
interface AnalyticsMemory {
  /** `updated_since` of the next sync: the start of the last successful one (API time). */
  lastSyncAt: string | null;
  /** The last journal entry taken. */
  journalSeq: number;
  awaiting: Awaited[];
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

const section = checkSection({
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

const metrics = {
  analyticsRuns: {
    name: 'isa_analytics_runs_total',
    help: 'Finished analytics runs by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(ANALYTICS_RESULTS) },
  },
  syncPages: {
    name: 'isa_analytics_sync_pages_total',
    help: 'Pages of GET /analytics/sessions read by the incremental sync.',
    type: 'counter',
    labels: ['environment'],
  },
  syncRows: {
    name: 'isa_analytics_sync_rows_total',
    help: 'Session rows read by the incremental sync.',
    type: 'counter',
    labels: ['environment'],
  },
  syncDuration: {
    name: 'isa_analytics_sync_duration_seconds',
    help: 'Duration of each incremental sync, first page to last.',
    type: 'histogram',
    labels: ['environment'],
    buckets: SYNC_BUCKETS,
  },
  lastSyncSuccess: {
    name: 'isa_analytics_last_sync_success_timestamp_seconds',
    help: 'Unix time of the last successful incremental sync.',
    type: 'gauge',
    labels: ['environment'],
  },
  ingestLag: {
    name: 'isa_analytics_ingest_lag_seconds',
    help: 'Time from creating a synthetic session to its first appearance in GET /analytics/sessions/{id}.',
    type: 'histogram',
    labels: ['environment'],
    buckets: INGEST_LAG_BUCKETS,
  },
  sessionsLate: {
    name: 'isa_analytics_sessions_late_total',
    help: 'Synthetic sessions not in analytics within the configured ingest_lag_bound (counted once).',
    type: 'counter',
    labels: ['environment'],
  },
  sessionsMissing: {
    name: 'isa_analytics_sessions_missing_total',
    help: 'Synthetic sessions that never appeared in analytics within ingest_timeout.',
    type: 'counter',
    labels: ['environment'],
  },
  sessionsAwaiting: {
    name: 'isa_analytics_sessions_awaiting',
    help: 'Synthetic sessions created but not yet seen in analytics.',
    type: 'gauge',
    labels: ['environment'],
  },
  oldestAwaiting: {
    name: 'isa_analytics_oldest_awaiting_seconds',
    help: 'Age of the oldest synthetic session not yet seen in analytics (0 when none).',
    type: 'gauge',
    labels: ['environment'],
  },
  ingestLagBound: {
    name: 'isa_analytics_ingest_lag_bound_seconds',
    help: 'Configured ingest_lag_bound: a session later than this is counted late.',
    type: 'gauge',
    labels: ['environment'],
  },
} as const;

type Ctx = CheckContext<AnalyticsConfig>;

export const analyticsCheck = defineCheck({
  name: 'analytics',
  config: section,
  metrics,
  operations: ['list_analytics_sessions', 'get_analytics_session'],
  contractChecks: ['analytics_campaign_id', 'response_schema'],
  summaryKeys: ['analytics_rows', 'ingest_awaiting'],
  run: runAnalytics,
  summary: (facts) => ({
    analytics_rows: facts === null ? null : String(facts.rows),
    ingest_awaiting: facts === null ? null : String(facts.awaiting),
  }),
  trace: (facts) =>
    facts === null
      ? []
      : [
          `${facts.rows} rows in ${facts.pages} pages`,
          `${facts.ingestLagsMs.length} appeared, ${facts.awaiting} awaiting, ${facts.missing} missing`,
        ],
  record(facts, sink, times) {
    sink.inc(metrics.analyticsRuns, { result: facts.result });
    sink.inc(metrics.syncPages, {}, facts.pages);
    sink.inc(metrics.syncRows, {}, facts.rows);
    if (facts.syncDurationMs !== null) {
      sink.observe(metrics.syncDuration, {}, facts.syncDurationMs / 1000);
    }
    if (facts.syncSucceeded) sink.set(metrics.lastSyncSuccess, {}, times.finishedAt / 1000);
    for (const ms of facts.ingestLagsMs) sink.observe(metrics.ingestLag, {}, ms / 1000);
    sink.inc(metrics.sessionsLate, {}, facts.late);
    sink.inc(metrics.sessionsMissing, {}, facts.missing);
    sink.set(metrics.sessionsAwaiting, {}, facts.awaiting);
    sink.set(metrics.oldestAwaiting, {}, facts.oldestAwaitingMs / 1000);
  },
  describeConfig(config, _environment, sink) {
    sink.set(metrics.ingestLagBound, {}, config.ingestLagBoundMs / 1000);
  },
});

/** Ends a step early with a bounded result. */
class AnalyticsFailure extends Error {
  constructor(
    readonly result: AnalyticsResult,
    message: string,
  ) {
    super(message);
  }
}

async function runAnalytics(ctx: Ctx): Promise<CheckOutcome<AnalyticsFacts>> {
  const memory = ctx.retained<AnalyticsMemory>(() => ({
    lastSyncAt: null,
    journalSeq: 0,
    awaiting: [],
  }));
  takeNewSessions(ctx, memory);
  const facts: AnalyticsFacts = {
    result: 'success',
    pages: 0,
    rows: 0,
    syncDurationMs: null,
    syncSucceeded: false,
    ingestLagsMs: [],
    late: 0,
    missing: 0,
    awaiting: 0,
    oldestAwaitingMs: 0,
  };
  const results: AnalyticsResult[] = [];
  const syncResult = await bounded(ctx, () => sync(ctx, memory, facts));
  results.push(syncResult);
  // Lookups still tell the lag when only the list failed; not under 401, 429 or an abort.
  if (!STOPPING.includes(syncResult)) {
    results.push(await bounded(ctx, () => lookUpAwaited(ctx, memory, facts)));
  }
  settleAwaited(ctx, memory, facts);
  if (facts.missing > 0) results.push('sessions_missing');
  facts.result = mostSevere(results);
  return {
    outcome: facts.result === 'success' ? 'pass' : 'fail',
    reason: facts.result === 'success' ? null : facts.result,
    facts,
  };
}

/** Results after which the run makes no further request. */
const STOPPING: readonly AnalyticsResult[] = ['unauthorized', 'rate_limited', 'error'];

/** Runs one part of a run; a failure becomes its bounded result. */
async function bounded(ctx: Ctx, part: () => Promise<AnalyticsResult>): Promise<AnalyticsResult> {
  try {
    return await part();
  } catch (err) {
    if (err instanceof AnalyticsFailure) {
      ctx.log.info({ result: err.result, detail: err.message }, 'analytics step failed');
      return err.result;
    }
    ctx.log.warn({ err, aborted: ctx.signal.aborted }, 'analytics run aborted');
    return 'error';
  }
}

/** The result that says most: the last in `ANALYTICS_RESULTS` order among those seen. */
function mostSevere(results: AnalyticsResult[]): AnalyticsResult {
  let worst: AnalyticsResult = 'success';
  for (const r of results) {
    if (ANALYTICS_RESULTS.indexOf(r) > ANALYTICS_RESULTS.indexOf(worst)) worst = r;
  }
  return worst;
}

/** Moves the sessions journaled since the last run into the awaited list. */
function takeNewSessions(ctx: Ctx, memory: AnalyticsMemory): void {
  for (const entry of ctx.createdSessions.since(memory.journalSeq)) {
    memory.journalSeq = entry.seq;
    memory.awaiting.push({
      token: entry.token,
      campaignId: entry.campaignId,
      createdAt: entry.createdAt,
      late: false,
    });
  }
}

/** The incremental sync: every page since the last successful sync. */
async function sync(
  ctx: Ctx,
  memory: AnalyticsMemory,
  facts: AnalyticsFacts,
): Promise<AnalyticsResult> {
  // No sync yet: reach back initial_window, and keep that point until a sync succeeds.
  memory.lastSyncAt ??= new Date(Date.now() - ctx.config.initialWindowMs).toISOString();
  const updatedSince = memory.lastSyncAt;
  const started = ctx.now();
  let nextSyncAt: string | null = null;
  let pages = 1;
  try {
    for (let page = 1; page <= pages; page++) {
      if (page > ctx.config.maxPages) {
        throw new AnalyticsFailure(
          'sync_incomplete',
          `${pages} pages to read, max_pages is ${ctx.config.maxPages}`,
        );
      }
      await ctx.acquireBudget();
      const response = await listAnalyticsSessions(
        ctx.client,
        { updated_since: updatedSince, page: String(page) },
        requestOptions(ctx),
      );
      ctx.step('sync', response);
      failUnlessOk(response, 'sync_failed');
      const validation = checkResponseSchema(ctx, analyticsListResponseSchema, response);
      if (!validation.data) throw new AnalyticsFailure('sync_failed', 'page does not match');
      const { data, meta } = validation.data;
      facts.pages += 1;
      facts.rows += data.length;
      // The API's own time of the first page: whatever changes after it, the next sync sees.
      if (page === 1) nextSyncAt = meta.responded_at;
      pages = meta.pages;
    }
  } finally {
    facts.syncDurationMs = ctx.now() - started;
  }
  if (nextSyncAt !== null) memory.lastSyncAt = nextSyncAt;
  facts.syncSucceeded = true;
  return 'success';
}

/** Looks up the awaited sessions, oldest first, at most `max_lookups`. */
async function lookUpAwaited(
  ctx: Ctx,
  memory: AnalyticsMemory,
  facts: AnalyticsFacts,
): Promise<AnalyticsResult> {
  let result: AnalyticsResult = 'success';
  const found = new Set<Awaited>();
  try {
    for (const session of memory.awaiting.slice(0, ctx.config.maxLookups)) {
      await ctx.acquireBudget();
      const response = await getAnalyticsSession(ctx.client, session.token, requestOptions(ctx));
      const seenAt = ctx.now();
      ctx.step('lookup', response);
      // Not there yet: the spec does not say which status an unknown session gets; 404 it is.
      if (response.statusCode === 404) continue;
      failUnlessOk(response, 'lookup_failed');
      const validation = checkResponseSchema(ctx, analyticsDetailResponseSchema, response);
      if (!validation.data) {
        result = 'lookup_failed';
        continue;
      }
      found.add(session);
      const lagMs = Math.max(0, seenAt - session.createdAt);
      facts.ingestLagsMs.push(lagMs);
      if (!session.late && lagMs > ctx.config.ingestLagBoundMs) {
        session.late = true;
        facts.late += 1;
      }
      if (validation.data.data.campaign_id === session.campaignId) {
        ctx.contract('analytics_campaign_id', 'pass');
      } else {
        // The value itself stays out: it comes from the API.
        ctx.contract(
          'analytics_campaign_id',
          'fail',
          'campaign_id differs from the one the session was created with',
        );
        result = 'campaign_mismatch';
      }
    }
  } finally {
    memory.awaiting = memory.awaiting.filter((session) => !found.has(session));
  }
  return result;
}

/** Counts late sessions, gives up on those past `ingest_timeout`, and sets the awaiting facts. */
function settleAwaited(ctx: Ctx, memory: AnalyticsMemory, facts: AnalyticsFacts): void {
  const now = ctx.now();
  const kept: Awaited[] = [];
  for (const session of memory.awaiting) {
    const age = now - session.createdAt;
    if (!session.late && age > ctx.config.ingestLagBoundMs) {
      session.late = true;
      facts.late += 1;
    }
    if (age > ctx.config.ingestTimeoutMs) facts.missing += 1;
    else kept.push(session);
  }
  memory.awaiting = kept;
  facts.awaiting = kept.length;
  facts.oldestAwaitingMs = kept.reduce((max, s) => Math.max(max, now - s.createdAt), 0);
}

function failUnlessOk(response: ApiResponse, otherwise: AnalyticsResult): void {
  if (response.statusCode === 200) return;
  const proxyFailed =
    response.transportError?.reason === 'proxy_error' || response.statusCode === 407;
  const result = proxyFailed
    ? 'proxy_error'
    : response.statusCode === 401
      ? 'unauthorized'
      : response.statusCode === 403
        ? 'forbidden'
        : response.statusCode === 429
          ? 'rate_limited'
          : otherwise;
  const error = response.transportError;
  const detail = error
    ? error.reason === 'proxy_error'
      ? `proxy_error ${error.code}`
      : error.reason
    : `HTTP ${response.statusCode ?? 'none'}`;
  throw new AnalyticsFailure(result, `${response.operation}: ${detail}`);
}

function requestOptions(ctx: Ctx) {
  return {
    timeoutMs: ctx.config.requestTimeoutMs,
    signal: ctx.signal,
    correlationId: ctx.correlationId,
  };
}
