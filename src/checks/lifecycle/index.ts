/**
 * The synthetic session lifecycle: create a session for the next address of the rotation, poll the
 * internet-services endpoint while `qualify_status` is `pending` or `retry_later`, read the session,
 * close it, and expect 410 from it afterwards.
 *
 * Rules from the API spec this check encodes:
 * - giving up after `poll_timeout` means the answer is unknown (`timeout`), never `no_service`;
 * - an empty `data` array alone never means no service; only `qualify_status: no_service` does;
 * - a session this monitor creates is always closed: the token is written to the session ledger
 *   before anything else happens with it, and closing is registered as always-run cleanup.
 */
import { initialResults } from '../shared/request.js';
import { z } from 'zod';
import type { ApiResponse } from '../../api/client.js';
import {
  QUALIFY_STATUSES,
  addressCombination,
  isTerminalQualifyStatus,
  offeringsEnvelopeSchema,
  qualifyStatusSchema,
  sessionEnvelopeSchema,
  sessionRequestSchema,
  type QualifyStatus,
} from '../../api/schemas.js';
import {
  positiveDuration,
  shorterThan,
  WHEN_MAPPING,
  isMs,
  type Loose,
} from '../../config/rules.js';
import {
  checkSection,
  type BudgetMisfit,
  type BudgetShare,
  type CheckConfigBase,
  runDeadlineMs,
} from '../../config/section.js';
import { formatDuration } from '../../config/duration.js';
import {
  defineCheck,
  type CheckContext,
  type CheckOutcome,
  type RunTimes,
} from '../../kernel/check.js';
import type { MetricSink } from '../../kernel/check.js';
import { checkResponseSchema } from '../shared/contract.js';
import { BudgetWaitError, RetryAfterError } from '../../limits/admission.js';
import { confirmsClose } from '../../sessions/tokens.js';
import * as sessionsApi from '../../api/sessions.js';

/** Result of one finished lifecycle run. */
export const LIFECYCLE_RESULTS = [
  'success',
  'create_failed',
  'qualify_failed',
  'qualify_timeout',
  'unexpected_outcome',
  'close_failed',
  'not_gone_after_close',
  'unauthorized',
  'rate_limited',
  'address_validation_unavailable',
  'budget',
  'error',
  'proxy_error',
] as const;
export type LifecycleResult = (typeof LIFECYCLE_RESULTS)[number];

/** The run's steps: the `step` label of the step histogram and the step names of the trace. */
export const LIFECYCLE_STEPS = ['create', 'poll', 'get', 'close', 'verify_gone'] as const;
export type LifecycleStep = (typeof LIFECYCLE_STEPS)[number];

/** Final qualify status of a run; `timeout` means unknown (the 90 s give-up), never no-service. */
export const QUALIFY_OUTCOMES = ['available', 'no_service', 'failed', 'timeout'] as const;
export type QualifyOutcome = (typeof QUALIFY_OUTCOMES)[number];

/** Every qualify_status a poll can see: the API's own set. */
export const POLL_STATUSES = QUALIFY_STATUSES;

/** What an address is expected to qualify as; `any` accepts every final status. */
export const EXPECTATIONS = ['available', 'no_service', 'failed', 'any'] as const;

/** Time to qualify: typical 20–30 s, early warning at 45 s, give-up at 90 s. */
export const QUALIFY_BUCKETS = [1, 2, 5, 10, 15, 20, 25, 30, 45, 60, 75, 90, 120] as const;
/** Lifecycle step durations: a poll step spans the whole polling loop, up to 90 s. */
export const STEP_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 90, 120] as const;

export interface AddressConfig {
  street1: string;
  street2?: string;
  city?: string;
  state?: string;
  zip?: string;
  /** The final qualify status a run must reach; `any` accepts every final status. */
  expect: (typeof EXPECTATIONS)[number];
}

export interface LifecycleConfig extends CheckConfigBase {
  pollIntervalMs: number;
  pollTimeoutMs: number;
  campaignId: string;
  /** Empty only when lifecycle is disabled. */
  addresses: AddressConfig[];
}

export interface LifecycleFacts {
  result: LifecycleResult;
  qualifyOutcome: QualifyOutcome | null;
  qualifyDurationMs: number | null;
  stepDurationsMs: Partial<Record<LifecycleStep, number>>;
  /** qualify_status of the creation response and of every poll, in order. */
  pollStatuses: QualifyStatus[];
  serviceDataSet: string | null;
}

/**
 * The lifecycle address of a file-less configuration. Nothing is known about the operator's data,
 * so it asserts no qualify status (`any`): the run still proves create, poll, get, close and 410.
 */
export const DEFAULT_ENV_ADDRESS = { street1: '123 Main St', zip: '80202', expect: 'any' } as const;

/** A lifecycle address: the API's own field rules (a session request), plus what to expect. */
const addressSchema = sessionRequestSchema
  .pick({ street1: true, street2: true, city: true, state: true, zip: true })
  .extend({ expect: z.enum(EXPECTATIONS).default('available') })
  .superRefine((value, ctx) => {
    const v = value as Loose;
    const fields = [v['street1'], v['city'], v['state'], v['zip']];
    // Only judge the combination when the fields themselves are well-typed and street1 is there;
    // otherwise their own problems already say what is wrong.
    if (typeof v['street1'] !== 'string') return;
    if (!fields.every((f) => f === undefined || typeof f === 'string')) return;
    if (addressCombination(v as Parameters<typeof addressCombination>[0]) === null) {
      ctx.addIssue({
        code: 'custom',
        message:
          'needs one of the address combinations the API accepts: street1 with zip, street1 with city and state, or street1 with city and zip',
      });
    }
  }, WHEN_MAPPING);

const section = checkSection({
  name: 'lifecycle',
  // request_timeout: each request of a run; 10 s is the ping timeout it used to borrow.
  defaults: { enabled: true, interval: '5m', timeout: '120s', requestTimeout: '10s' },
  shape: {
    poll_interval: positiveDuration().prefault('2s'),
    poll_timeout: positiveDuration().prefault('90s'),
    // The API's own rule for campaign_id (length 1-100).
    campaign_id: sessionRequestSchema.shape.campaign_id.unwrap().default('isa-monitor-synthetic'),
    addresses: z.array(addressSchema).optional(),
  },
  docs: {
    summary:
      'the session check: create, poll until qualified, get, close, check the closed session answers 410',
    keys: {
      timeout: { meaning: 'bounds the whole run' },
      request_timeout: {
        meaning:
          'the timeout of each single request of a run (create, each poll, get, close, verify) and of its cleanup close. 10 s is what these requests had before the key existed (they borrowed `ping.timeout`); the API answers each in well under a second, and qualification is bounded by `poll_timeout`, not by this',
      },
      poll_interval: {
        type: 'duration',
        meaning: 'greater than 0, shorter than `lifecycle.poll_timeout`',
      },
      poll_timeout: {
        type: 'duration',
        meaning:
          'greater than 0, shorter than `lifecycle.timeout`; after it the outcome is `timeout` (unknown), never `no_service`',
      },
      campaign_id: {
        type: 'string',
        meaning:
          "the API's rule: 1–100 characters. Tags synthetic sessions so analytics can tell them apart.",
      },
      addresses: {
        type: 'list',
        default: '**required when lifecycle is enabled**',
        meaning:
          'at least one; rotated, each run uses the next. Each address: see [Address](#address-environmentslifecycleaddresses)',
      },
    },
  },
  refine(v, issues) {
    shorterThan(v, issues, 'poll_interval', 'poll_timeout', 'lifecycle');
    shorterThan(v, issues, 'poll_timeout', 'timeout', 'lifecycle');
    // No built-in default address: whether an address is served is a fact about the operator's
    // data, and a lifecycle check that expects the wrong outcome alerts for nothing.
    if (v['enabled'] === true && v['addresses'] === undefined) {
      issues.addIssue({
        code: 'custom',
        path: ['addresses'],
        message: 'required when lifecycle is enabled',
      });
    } else if (
      v['enabled'] === true &&
      Array.isArray(v['addresses']) &&
      v['addresses'].length === 0
    ) {
      issues.addIssue({
        code: 'custom',
        path: ['addresses'],
        message: 'must list at least one address when lifecycle is enabled',
      });
    }
  },
  toConfig: (p) => ({
    pollIntervalMs: p.poll_interval,
    pollTimeoutMs: p.poll_timeout,
    campaignId: p.campaign_id,
    addresses: (p.addresses ?? []).map(toAddressConfig),
  }),
  // The most frequent request is a poll, one per poll interval.
  extraGaps: (v) =>
    isMs(v['poll_interval']) ? [{ key: 'lifecycle.poll_interval', ms: v['poll_interval'] }] : [],
  fileless: { addresses: [{ ...DEFAULT_ENV_ADDRESS }] },
  budgetFit: lifecycleBudgetFit,
});

/** The requests of a run besides its polls within `poll_timeout`: create, get, close, 410, a poll. */
export const LIFECYCLE_PACED_REQUESTS = 5;

/**
 * Whether a run fits its deadline when its requests are paced at what the budget leaves after
 * pings (docs/configuration.md, "Request budget"): its poll loop may last `poll_timeout`, one
 * poll's wait past it included, and five requests are paced at the budget's share. When the run
 * needs longer than its deadline, its steps end as `budget` against a healthy API.
 */
function lifecycleBudgetFit(c: LifecycleConfig, budget: BudgetShare): BudgetMisfit | null {
  const { share, perSecond, refillFactor, firstPerSecond } = budget;
  const deadlineMs = runDeadlineMs(c);
  const neededMs =
    share > 0 ? c.pollTimeoutMs + (LIFECYCLE_PACED_REQUESTS * 1000) / share : Infinity;
  if (neededMs <= deadlineMs) return null;
  const spareMs = deadlineMs - c.pollTimeoutMs;
  const shareNeeded = (LIFECYCLE_PACED_REQUESTS * 1000) / spareMs;
  const budgetNeeded = Math.ceil(((shareNeeded + firstPerSecond) / refillFactor) * 100) / 100;
  const rate = (n: number) => `${Math.round(n * 1000) / 1000}/s`;
  const pings = firstPerSecond > 0 ? ` - ${rate(firstPerSecond)} kept for pings` : '';
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10}s`;
  const arithmetic =
    share > 0
      ? `poll_timeout ${formatDuration(c.pollTimeoutMs)} + ${LIFECYCLE_PACED_REQUESTS} requests at the ${rate(share)} the budget leaves (request_budget_per_second ${perSecond} × ${refillFactor}${pings}) = ${seconds(neededMs)}`
      : `the budget leaves nothing after pings (request_budget_per_second ${perSecond} × ${refillFactor}${pings})`;
  const timeout = share > 0 ? seconds(Math.ceil(neededMs / 100) * 100) : 'what the budget allows';
  return {
    key: 'timeout',
    message:
      `a lifecycle run may need longer than its ${seconds(deadlineMs)} deadline: ${arithmetic}; ` +
      `its runs would end as "budget". Raise request_budget_per_second to at least ${budgetNeeded}, ` +
      `or lifecycle.timeout to at least ${timeout}, or lengthen ping.interval`,
  };
}

const metrics = {
  lifecycleRuns: {
    name: 'isa_lifecycle_runs_total',
    help: 'Finished synthetic session lifecycle runs by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(LIFECYCLE_RESULTS) },
  },
  lifecycleStepDuration: {
    name: 'isa_lifecycle_step_duration_seconds',
    help: 'Duration of each lifecycle step; poll spans the whole polling loop.',
    type: 'histogram',
    labels: ['environment', 'step'],
    knownValues: { step: LIFECYCLE_STEPS },
    buckets: STEP_BUCKETS,
  },
  lifecycleLastSuccess: {
    name: 'isa_lifecycle_last_success_timestamp_seconds',
    help: 'Unix time of the last successful lifecycle run.',
    type: 'gauge',
    labels: ['environment'],
  },
  qualifyOutcomes: {
    name: 'isa_qualify_outcomes_total',
    help: 'Final qualify status of each lifecycle run; timeout means unknown, not no-service.',
    type: 'counter',
    labels: ['environment', 'status'],
    knownValues: { status: QUALIFY_OUTCOMES },
  },
  qualifyPolls: {
    name: 'isa_qualify_polls_total',
    help: 'qualify_status of every creation and poll response.',
    type: 'counter',
    labels: ['environment', 'status'],
    knownValues: { status: POLL_STATUSES },
  },
  qualifyDuration: {
    name: 'isa_qualify_duration_seconds',
    help: 'Time from session creation to the final qualify status.',
    type: 'histogram',
    labels: ['environment'],
    buckets: QUALIFY_BUCKETS,
  },
  serviceDataSet: {
    name: 'isa_service_data_set_info',
    help: 'The service_data_set behind the latest offerings (value 1).',
    type: 'gauge',
    labels: ['environment', 'service_data_set'],
  },
} as const;

export const lifecycleCheck = defineCheck({
  name: 'lifecycle',
  config: section,
  metrics,
  operations: ['create_session', 'poll_services', 'get_session', 'close_session', 'verify_gone'],
  contractChecks: ['closed_session_gone', 'response_schema', 'session_token_header'],
  createsSessions: true,
  summaryKeys: ['qualify_status', 'service_data_set'],
  run: runLifecycle,
  summary: (facts) => ({
    qualify_status: facts?.qualifyOutcome ?? null,
    service_data_set: facts?.serviceDataSet ?? null,
  }),
  trace: (facts) => (facts?.qualifyOutcome ? [`qualify_status ${facts.qualifyOutcome}`] : []),
  details: (facts) => ({ qualify_ms: facts?.qualifyDurationMs ?? null }),
  page: {
    timeline: true,
    distribution: {
      key: 'qualify_status',
      label: 'Qualify outcomes',
      durationKey: 'qualify_ms',
      durationLabel: 'Time to qualify',
    },
  },
  adHoc: {
    options: { address: { type: 'string' }, expect: { type: 'string' } },
    usage: `  --address ADDR        lifecycle: "STREET1, ZIP", "STREET1, CITY, STATE" or a JSON
                        object (default: "1 Instant Way, 80202", a simulator test address)
  --expect STATUS       lifecycle: expected qualify status: available | no_service |
                        failed | any (default: available)`,
    section(values) {
      const address = parseAddress(values['address'] ?? AD_HOC_ADDRESS);
      if (typeof address === 'string') return { problem: address };
      return { section: { addresses: [{ ...address, expect: values['expect'] ?? 'available' }] } };
    },
  },
  record: recordLifecycle,
});

/** The address of `check lifecycle --base-url ...` without `--address`: a simulator test address. */
const AD_HOC_ADDRESS = '1 Instant Way, 80202';

/**
 * `"STREET1, ZIP"`, `"STREET1, CITY, ST"` or a JSON object with the API's field names; a string
 * is the problem with the text.
 */
function parseAddress(text: string): Record<string, string> | string {
  if (text.trim().startsWith('{')) {
    try {
      return JSON.parse(text) as Record<string, string>;
    } catch {
      return '--address is not valid JSON';
    }
  }
  const parts = text.split(',').map((p) => p.trim());
  const [street1, second, third] = parts;
  if (!street1 || !second || parts.length > 3) {
    return '--address expects "STREET1, ZIP", "STREET1, CITY, STATE" or JSON';
  }
  if (third !== undefined) return { street1, city: second, state: third };
  return { street1, zip: second };
}

type Ctx = CheckContext<LifecycleConfig>;

function recordLifecycle(facts: LifecycleFacts, sink: MetricSink, times: RunTimes): void {
  sink.inc(metrics.lifecycleRuns, { result: facts.result });
  for (const [step, ms] of Object.entries(facts.stepDurationsMs)) {
    if (isDuration(ms)) sink.observe(metrics.lifecycleStepDuration, { step }, ms / 1000);
  }
  if (facts.result === 'success') {
    // When the run finished: "no success for 15 minutes" should count from a completed run.
    sink.set(metrics.lifecycleLastSuccess, {}, times.finishedAt / 1000);
  }
  if (facts.qualifyOutcome !== null) {
    sink.inc(metrics.qualifyOutcomes, { status: facts.qualifyOutcome });
  }
  for (const status of facts.pollStatuses) sink.inc(metrics.qualifyPolls, { status });
  if (isDuration(facts.qualifyDurationMs)) {
    sink.observe(metrics.qualifyDuration, {}, facts.qualifyDurationMs / 1000);
  }
  if (facts.serviceDataSet !== null) {
    // Exactly one series per environment: the latest data set.
    sink.setOnly(
      metrics.serviceDataSet,
      { service_data_set: dataSetLabel(facts.serviceDataSet) },
      1,
    );
  }
}

function isDuration(ms: number | null | undefined): ms is number {
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0;
}

/**
 * `service_data_set` comes from the API, so it is checked before it becomes a label value: the
 * spec calls it a numeric string; anything else is exported as `invalid`.
 */
export function dataSetLabel(value: string): string {
  return /^\d{1,32}$/.test(value) ? value : 'invalid';
}

function toAddressConfig(address: {
  street1: string;
  street2?: string | undefined;
  city?: string | undefined;
  state?: string | undefined;
  zip?: string | undefined;
  expect: AddressConfig['expect'];
}): AddressConfig {
  // Only the keys that were given, so the address can be sent as a session request as it is.
  const out: AddressConfig = { street1: address.street1, expect: address.expect };
  if (address.street2 !== undefined) out.street2 = address.street2;
  if (address.city !== undefined) out.city = address.city;
  if (address.state !== undefined) out.state = address.state;
  if (address.zip !== undefined) out.zip = address.zip;
  return out;
}

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

async function runLifecycle(ctx: Ctx): Promise<CheckOutcome<LifecycleFacts>> {
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
