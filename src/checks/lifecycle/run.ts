/**
 * One lifecycle run: create a session for the next address, poll until it qualifies, read it,
 * close it and expect 410 from it afterwards; the close is always-run cleanup.
 */
import type { ApiResponse } from '../../api/client.js';
import {
  isTerminalQualifyStatus,
  offeringsEnvelopeSchema,
  qualifyStatusSchema,
  sessionEnvelopeSchema,
  type QualifyStatus,
} from '../../api/schemas.js';
import { type CheckContext, type CheckOutcome } from '../../kernel/check.js';
import { checkResponseSchema } from '../shared/contract.js';
import { BudgetWaitError, RetryAfterError } from '../../limits/admission.js';
import { confirmsClose } from '../../sessions/tokens.js';
import * as sessionsApi from '../../api/sessions.js';
import { LifecycleResult, QualifyOutcome, LifecycleFacts } from './facts.js';
import { AddressConfig, LifecycleConfig } from './config.js';

type Ctx = CheckContext<LifecycleConfig>;

/** The session a run created, and whether the run itself saw the API confirm its close. */
interface SyntheticSession {
  token: string;
  closedByRun: boolean;
}

/** Ends the run early with a bounded result. */
class LifecycleFailure extends Error {
  constructor(
    readonly result: LifecycleResult,
    message: string,
  ) {
    super(message);
  }
}

export async function runLifecycle(ctx: Ctx): Promise<CheckOutcome<LifecycleFacts>> {
  const cfg = ctx.config;
  const address = pickAddress(cfg.addresses, ctx.runNumber);
  const facts: LifecycleFacts = {
    result: 'success',
    qualifyOutcome: null,
    qualifyDurationMs: null,
    stepDurationsMs: {},
    pollStatuses: [],
    serviceDataSet: null,
  };
  // A qualify verdict (failed, timeout, unexpected) does not stop the run: the session is still
  // read, closed and checked for 410, and the verdict, which came first, is the run's result.
  let verdict: LifecycleResult = 'success';
  try {
    const { session, status, createdAt } = await createSession(ctx, address, facts);
    const { token } = session;
    const finalStatus = await pollUntilTerminal(ctx, token, status, createdAt, facts);
    verdict = qualifyVerdict(address, finalStatus);
    await getSession(ctx, token, facts);
    await closeSession(ctx, session, facts);
    await verifyGone(ctx, token, facts);
    facts.result = verdict;
  } catch (err) {
    // A Retry-After longer than the run is `rate_limited`; a budget token that could not come
    // before the deadline is `budget` (the monitor's own pacing, docs/configuration.md);
    // anything else (the run's deadline, a shutdown) is `error`. The cleanup still closes.
    const result =
      err instanceof LifecycleFailure
        ? err.result
        : err instanceof RetryAfterError
          ? 'rate_limited'
          : err instanceof BudgetWaitError
            ? 'budget'
            : 'error';
    facts.result = verdict === 'success' ? result : verdict;
    if (err instanceof LifecycleFailure) {
      ctx.log.info({ result, detail: err.message }, 'lifecycle step failed');
    } else {
      ctx.log.warn({ err, aborted: ctx.signal.aborted }, 'lifecycle run aborted');
    }
  }
  return {
    outcome: facts.result === 'success' ? 'pass' : 'fail',
    reason: facts.result === 'success' ? null : facts.result,
    facts,
  };
}

function pickAddress(addresses: AddressConfig[], runNumber: number): AddressConfig {
  const address = addresses[runNumber % addresses.length];
  if (!address) throw new Error('lifecycle check has no addresses configured');
  return address;
}

/** Maps a failed response to the run's result, for the statuses every step treats alike. */
function commonFailure(response: ApiResponse, otherwise: LifecycleResult): LifecycleResult {
  // The egress proxy refused or did not answer: the partner was not reached.
  if (response.transportError?.reason === 'proxy_error' || response.statusCode === 407) {
    return 'proxy_error';
  }
  if (response.statusCode === 401) return 'unauthorized';
  if (response.statusCode === 429) return 'rate_limited';
  return otherwise;
}

function describe(response: ApiResponse): string {
  const error = response.transportError;
  if (error?.reason === 'proxy_error') return `${response.operation}: proxy_error ${error.code}`;
  if (error) return `${response.operation}: ${error.reason}`;
  return `${response.operation}: HTTP ${response.statusCode ?? 'none'}`;
}

async function createSession(
  ctx: Ctx,
  address: AddressConfig,
  facts: LifecycleFacts,
): Promise<{ session: SyntheticSession; status: QualifyStatus; createdAt: number }> {
  const { expect: _expect, ...fields } = address;
  const body = { ...fields, campaign_id: ctx.config.campaignId };
  const createdAt = ctx.now();
  // Tokens come from any answer (header and body, whatever the status) and are on disk already.
  // The budget token is taken after the intent write, right before the create leaves.
  const { response, tokens, durable } = await ctx.sessions.create(body, requestOptions(ctx), () =>
    ctx.acquireBudget(),
  );
  const sessions = tokens.map((token) => ({ token, closedByRun: false }));
  // Every token is closed in cleanup, also the extra one of a header that disagrees with the body.
  for (const s of sessions) ctx.cleanup(() => closeInCleanup(ctx, s));
  const primary = response.statusCode === 201 ? tokenOf(response) : null;
  const session: SyntheticSession | null = sessions.find((s) => s.token === primary) ?? null;
  if (!durable) throw new Error('the session ledger could not record the session');
  ctx.step('create', response);
  facts.stepDurationsMs.create = response.durationMs;

  if (response.statusCode === 503) {
    throw new LifecycleFailure('address_validation_unavailable', describe(response));
  }
  if (response.statusCode !== 201) {
    throw new LifecycleFailure(commonFailure(response, 'create_failed'), describe(response));
  }
  const validation = checkResponseSchema(ctx, offeringsEnvelopeSchema, response);
  const headerToken = response.headers['session_token'] ?? null;
  ctx.contract(
    'session_token_header',
    headerToken !== null && headerToken === metaToken(response) ? 'pass' : 'fail',
  );
  if (session === null) {
    throw new LifecycleFailure('create_failed', 'no session token in response');
  }
  const status = qualifyStatusOf(response);
  if (status === null) {
    throw new LifecycleFailure('create_failed', 'no valid qualify_status in creation response');
  }
  facts.pollStatuses.push(status);
  if (validation.data) facts.serviceDataSet = validation.data.meta.service_data_set;
  return { session, status, createdAt };
}

async function pollUntilTerminal(
  ctx: Ctx,
  token: string,
  initial: QualifyStatus,
  createdAt: number,
  facts: LifecycleFacts,
): Promise<QualifyOutcome> {
  const { pollIntervalMs, pollTimeoutMs } = ctx.config;
  let status: QualifyStatus = initial;
  const loopStart = ctx.now();
  let polls = 0;
  try {
    while (!isTerminalQualifyStatus(status)) {
      if (ctx.now() - createdAt + pollIntervalMs > pollTimeoutMs) {
        // Unknown, not no-service: the spec's 90 s give-up.
        facts.qualifyOutcome = 'timeout';
        facts.qualifyDurationMs = ctx.now() - createdAt;
        return 'timeout';
      }
      await ctx.sleep(pollIntervalMs);
      await ctx.acquireBudget();
      const response = await sessionsApi.pollServices(ctx.client, token, requestOptions(ctx));
      polls += 1;
      ctx.step('poll', response);
      if (response.statusCode !== 200) {
        throw new LifecycleFailure(commonFailure(response, 'error'), describe(response));
      }
      checkResponseSchema(ctx, offeringsEnvelopeSchema, response);
      const next = qualifyStatusOf(response);
      if (next === null) throw new LifecycleFailure('error', 'poll response has no qualify_status');
      status = next;
      facts.pollStatuses.push(status);
      const dataSet = serviceDataSetOf(response);
      if (dataSet !== null) facts.serviceDataSet = dataSet;
    }
  } finally {
    if (polls > 0) facts.stepDurationsMs.poll = ctx.now() - loopStart;
  }
  facts.qualifyOutcome = status;
  facts.qualifyDurationMs = ctx.now() - createdAt;
  return status;
}

/** The run's result from its final qualify status and the address's expectation. */
function qualifyVerdict(address: AddressConfig, finalStatus: QualifyOutcome): LifecycleResult {
  if (finalStatus === 'timeout') return 'qualify_timeout';
  if (finalStatus === 'failed' && address.expect !== 'failed') return 'qualify_failed';
  if (address.expect !== 'any' && address.expect !== finalStatus) return 'unexpected_outcome';
  return 'success';
}

async function getSession(ctx: Ctx, token: string, facts: LifecycleFacts): Promise<void> {
  await ctx.acquireBudget();
  const response = await sessionsApi.getSession(ctx.client, token, requestOptions(ctx));
  ctx.step('get', response);
  facts.stepDurationsMs.get = response.durationMs;
  if (response.statusCode !== 200) {
    throw new LifecycleFailure(commonFailure(response, 'error'), describe(response));
  }
  const validation = checkResponseSchema(ctx, sessionEnvelopeSchema, response);
  if (validation.data && validation.data.meta.session_status !== 'open') {
    throw new LifecycleFailure('error', 'session is not open before close');
  }
}

async function closeSession(
  ctx: Ctx,
  session: SyntheticSession,
  facts: LifecycleFacts,
): Promise<void> {
  await ctx.acquireBudget();
  const response = await sessionsApi.closeSession(ctx.client, session.token, requestOptions(ctx));
  ctx.step('close', response);
  facts.stepDurationsMs.close = response.durationMs;
  if (response.statusCode !== 200) {
    throw new LifecycleFailure(commonFailure(response, 'close_failed'), describe(response));
  }
  const validation = checkResponseSchema(ctx, sessionEnvelopeSchema, response);
  const closed =
    validation.data?.meta.session_status === 'closed' || sessionStatusOf(response) === 'closed';
  if (!closed)
    throw new LifecycleFailure('close_failed', 'close did not report session_status closed');
  session.closedByRun = true;
  await ctx.sessions.closed(session.token);
}

async function verifyGone(ctx: Ctx, token: string, facts: LifecycleFacts): Promise<void> {
  await ctx.acquireBudget();
  const response = await sessionsApi.verifyGone(ctx.client, token, requestOptions(ctx));
  ctx.step('verify_gone', response);
  facts.stepDurationsMs.verify_gone = response.durationMs;
  if (response.statusCode === 410) {
    ctx.contract('closed_session_gone', 'pass');
    return;
  }
  if (response.statusCode !== null && response.statusCode >= 200 && response.statusCode < 300) {
    ctx.contract('closed_session_gone', 'fail', `HTTP ${response.statusCode}`);
    throw new LifecycleFailure('not_gone_after_close', describe(response));
  }
  // A 5xx or a timeout says nothing about the contract either way.
  ctx.contract('closed_session_gone', 'error', describe(response));
  throw new LifecycleFailure(commonFailure(response, 'error'), describe(response));
}

/**
 * Closes the session after a failed or aborted run. Runs with its own short deadline, never
 * throws, and never changes the run's result: the first failure is the one that matters. A token
 * that cannot be closed stays in the ledger, where the session reaper retries it with backoff.
 */
async function closeInCleanup(ctx: Ctx, session: SyntheticSession): Promise<void> {
  const { token } = session;
  if (session.closedByRun) return;
  try {
    await ctx.acquireBudget();
    const response = await sessionsApi.closeSession(ctx.client, token, {
      timeoutMs: ctx.config.requestTimeoutMs,
      correlationId: ctx.correlationId,
    });
    if (confirmsClose(response)) {
      await ctx.sessions.closed(token);
    } else {
      ctx.log.warn(
        { detail: describe(response) },
        'closing the synthetic session failed; will retry',
      );
    }
  } catch (err) {
    ctx.log.warn({ err }, 'closing the synthetic session failed; will retry');
  } finally {
    ctx.sessions.release(token);
  }
}

function requestOptions(ctx: Ctx) {
  return {
    timeoutMs: ctx.config.requestTimeoutMs,
    signal: ctx.signal,
    correlationId: ctx.correlationId,
  };
}

function record(body: unknown): Record<string, unknown> | null {
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : null;
}

function metaToken(response: ApiResponse): string | null {
  const meta = record(record(response.body)?.['meta']);
  const token = meta?.['session_token'];
  return typeof token === 'string' && token.length > 0 ? token : null;
}

/** The session token: from `meta` when the body has one, else from the `session_token` header. */
function tokenOf(response: ApiResponse): string | null {
  if (response.statusCode !== 201) return null;
  return metaToken(response) ?? response.headers['session_token'] ?? null;
}

function qualifyStatusOf(response: ApiResponse): QualifyStatus | null {
  const parsed = qualifyStatusSchema.safeParse(record(response.body)?.['qualify_status']);
  return parsed.success ? parsed.data : null;
}

function serviceDataSetOf(response: ApiResponse): string | null {
  const value = record(record(response.body)?.['meta'])?.['service_data_set'];
  return typeof value === 'string' && /^\d+$/.test(value) ? value : null;
}

function sessionStatusOf(response: ApiResponse): string | null {
  const value = record(record(response.body)?.['meta'])?.['session_status'];
  return typeof value === 'string' ? value : null;
}
