/**
 * The analytics endpoints: a client's sessions with order data, paged, filtered and ordered as
 * the spec says, scoped to the API key that asks.
 */
import express, { type Request, type Response, type Router } from 'express';
import { analyticsDetailResponseSchema, analyticsListResponseSchema } from '../schemas.js';
import { toDetail, toRow, type AnalyticsRecord } from '../analytics.js';
import { ctx, queryArray, sendError, sendValid } from '../http.js';
import type { SimulatorState } from '../state.js';

/** Sessions per page of GET /analytics/sessions. */
export const ANALYTICS_PAGE_SIZE = 50;

function queryString(req: Request, name: string): string | undefined {
  const v = (req.query as Record<string, unknown>)[name];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === 'string' ? first : undefined;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** An ISO 8601 date or timestamp in ms; a bare date as its first (or last) millisecond, UTC. */
function parseIsoDate(value: string, endOfDay: boolean): number | null {
  if (!/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) return null;
  const ms = Date.parse(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) return null;
  return DATE_ONLY.test(value) && endOfDay ? ms + 86_400_000 - 1 : ms;
}

/** The analytics routes, bound to a state. */
export function analyticsRoutes(state: SimulatorState, now: () => number): Router {
  const router = express.Router();
  router.get('/analytics/sessions', (req, res) => {
    const query = listQueryOrAnswer(req, res);
    if (query) sendSessionList(state, now, query, res);
  });
  router.get('/analytics/sessions/:id', (req, res) => sendSessionDetail(state, now, req, res));
  return router;
}

/** The query of GET /analytics/sessions, parsed. */
interface ListQuery {
  page: number;
  startDate: number | null;
  endDate: number | null;
  updatedSince: number | null;
  tokenIds: string[];
  withClicks: boolean;
}

/** The list query, or null after answering 400 for a bad page or date bound. */
function listQueryOrAnswer(req: Request, res: Response): ListQuery | null {
  const pageParam = queryString(req, 'page');
  const page = pageParam === undefined ? 1 : /^\d+$/.test(pageParam) ? Number(pageParam) : NaN;
  if (!Number.isSafeInteger(page) || page < 1) {
    sendError(res, 400, 'page must be an integer of at least 1');
    return null;
  }
  const bounds: Record<'start_date' | 'end_date', number | null> = {
    start_date: null,
    end_date: null,
  };
  for (const name of ['start_date', 'end_date'] as const) {
    const raw = queryString(req, name);
    if (raw === undefined) continue;
    const parsed = parseIsoDate(raw, name === 'end_date');
    if (parsed === null) {
      sendError(res, 400, `${name} must be an ISO 8601 date or timestamp`);
      return null;
    }
    bounds[name] = parsed;
  }
  // An invalid updated_since is ignored, as the spec says.
  const updatedSinceRaw = queryString(req, 'updated_since');
  return {
    page,
    startDate: bounds.start_date,
    endDate: bounds.end_date,
    updatedSince: updatedSinceRaw === undefined ? null : parseIsoDate(updatedSinceRaw, false),
    tokenIds: queryArray(req, 'token_ids'),
    withClicks: ['true', '1'].includes(queryString(req, 'with_clicks') ?? ''),
  };
}

/** One page of the asking client's ingested sessions; 403 when token_ids names another's. */
function sendSessionList(
  state: SimulatorState,
  now: () => number,
  query: ListQuery,
  res: Response,
): void {
  const { environment, clientId } = ctx(res);
  const records = state.analyticsFor(environment, clientId ?? 'anonymous');
  const owned = new Set(records.map((r) => r.sessionToken));
  if (query.tokenIds.some((t) => !owned.has(t))) {
    sendError(res, 403, 'token_ids includes tokens that do not belong to this client');
    return;
  }
  const selected = selectSessions(state, environment, records, query);
  const { page } = query;
  const count = selected.length;
  const pages = Math.ceil(count / ANALYTICS_PAGE_SIZE);
  const onPage = selected.slice((page - 1) * ANALYTICS_PAGE_SIZE, page * ANALYTICS_PAGE_SIZE);
  // Used up only by a page it changes: one holding a session created through the simulator.
  const campaign = onPage.some((r) => r.session !== null)
    ? ctx(res).faults?.take('analytics_campaign')?.campaignId
    : undefined;
  sendValid(res, 200, analyticsListResponseSchema, {
    message: `${count} session${count === 1 ? '' : 's'} found`,
    request_status: 'ok',
    data: onPage.map((r) => toRow(r, campaign)),
    meta: { responded_at: new Date(now()).toISOString(), page, pages, count },
  });
}

/** The ingested records the query selects, in the spec's order. */
function selectSessions(
  state: SimulatorState,
  environment: string,
  records: AnalyticsRecord[],
  query: ListQuery,
): AnalyticsRecord[] {
  const { startDate, endDate, tokenIds, withClicks, updatedSince } = query;
  const selected = records
    .filter(
      (r) =>
        state.analyticsIngested(environment, r) &&
        (startDate === null || r.createdAt >= startDate) &&
        (endDate === null || r.createdAt <= endDate) &&
        (tokenIds.length === 0 || tokenIds.includes(r.sessionToken)) &&
        (!withClicks || r.clicks > 0),
    )
    .map((r) => ({ r, updatedAt: state.analyticsUpdatedAt(r) }))
    .filter(({ updatedAt }) => updatedSince === null || updatedAt >= updatedSince);
  // With updated_since, most recent change first (the incremental-sync order); else newest first.
  if (updatedSince !== null)
    selected.sort((a, b) => b.updatedAt - a.updatedAt || b.r.createdAt - a.r.createdAt);
  else selected.sort((a, b) => b.r.createdAt - a.r.createdAt);
  return selected.map(({ r }) => r);
}

/** One of the asking client's ingested sessions, by id or session token. */
function sendSessionDetail(
  state: SimulatorState,
  now: () => number,
  req: Request,
  res: Response,
): void {
  const { environment, clientId } = ctx(res);
  const id = String(req.params.id);
  const record = state
    .analyticsFor(environment, clientId ?? 'anonymous')
    .find((r) => r.id === id.toLowerCase() || r.sessionToken === id);
  // Not yet ingested is indistinguishable from unknown.
  if (!record || !state.analyticsIngested(environment, record)) {
    sendError(res, 404, 'Session not found');
    return;
  }
  const campaign =
    record.session === null ? undefined : ctx(res).faults?.take('analytics_campaign')?.campaignId;
  sendValid(res, 200, analyticsDetailResponseSchema, {
    message: 'Session found',
    request_status: 'ok',
    data: toDetail(record, campaign),
    meta: { responded_at: new Date(now()).toISOString() },
  });
}
