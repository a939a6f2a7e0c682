/**
 * One analytics run: sync the rows updated since the last successful sync, then look up the
 * synthetic sessions still awaited, and settle which appeared, are late or missing.
 */
import type { ApiResponse } from '../../api/client.js';
import { analyticsDetailResponseSchema, analyticsListResponseSchema } from './endpoint.js';
import { type CheckContext, type CheckOutcome } from '../../kernel/check.js';
import { checkResponseSchema } from '../shared/contract.js';
import { getAnalyticsSession, listAnalyticsSessions } from './request.js';
import { ANALYTICS_RESULTS, type AnalyticsResult, type AnalyticsFacts } from './facts.js';
import type { AnalyticsConfig } from './config.js';

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

type Ctx = CheckContext<AnalyticsConfig>;

/** Ends a step early with a bounded result. */
class AnalyticsFailure extends Error {
  constructor(
    readonly result: AnalyticsResult,
    message: string,
  ) {
    super(message);
  }
}

export async function runAnalytics(ctx: Ctx): Promise<CheckOutcome<AnalyticsFacts>> {
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
