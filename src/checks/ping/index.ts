/**
 * The ping check: `GET /ping`, classified against the environment's latency thresholds. A valid
 * answer is a 200 with `{message, timestamp}` (ISO-8601). A timeout counts as critical latency:
 * a hanging API is also a slow one.
 */
import type { ApiResponse, PhaseTimings } from '../../api/client.js';
import { z } from 'zod';
import { pingResponseSchema } from '../../api/schemas.js';
import { formatDuration } from '../../config/duration.js';
import { parseDuration } from '../../config/duration.js';
import {
  asLoose,
  isMs,
  isRecord,
  notShorterThan,
  positiveDuration,
  timerInterval,
  type Issues,
  type Loose,
} from '../../config/rules.js';
import { checkSection } from '../../config/section.js';
import { PHASES, type Phase } from '../../kernel/vocabulary.js';
import {
  FOLLOW_UP_ENDS,
  defineCheck,
  type CheckContext,
  type FollowUpPolicy,
  type StepRecord,
} from '../../kernel/check.js';
import { validateBody } from '../shared/contract.js';
import {
  LATENCY_CLASSES,
  THRESHOLD_LEVELS,
  classifyLatency,
  type LatencyClass,
} from '../../kernel/latency.js';
import { REQUEST_FAILURES, requestFailure, initialResults } from '../shared/request.js';
import { ping } from './request.js';

/** Result of one ping attempt. */
export const PING_RESULTS = ['ok', ...REQUEST_FAILURES, 'invalid_body'] as const;
export type PingResult = (typeof PING_RESULTS)[number];

export { LATENCY_CLASSES, type LatencyClass };

/**
 * The ping histogram's fixed bounds, a coarse ladder: exactly at the API's 0.1/0.5/1 s guidance
 * (the default thresholds) and past the default 10 s timeout. The configuration adds the rest
 * (`configuredBounds`): every configured threshold, exactly, so the rules judge it at its own
 * bound; and a bound at twice the ping timeout where 30 s is not that far.
 */
export const PING_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 30] as const;
/**
 * Phase buckets: none but `+Inf`. The phase histogram is five series per environment, and what
 * every dashboard, runbook and rule reads from it is each phase's mean (`_sum` / `_count`); its
 * finite buckets were a third of a ping-only environment's samples. A slow-ping count or a
 * quantile comes from `isa_ping_duration_seconds`. It stays a histogram (docs/metrics.md), so a
 * bucket can come back without renaming anything.
 */
export const PHASE_BUCKETS = [] as const;

/**
 * How a ping gets its connection: `new` opens one for every ping and closes it after (as
 * blackbox_exporter does), so connect and TLS are in every measurement; `reuse` keeps one alive
 * between pings, so they are in none unless the server closed it meanwhile.
 */
export const CONNECTION_MODES = ['new', 'reuse'] as const;
export type ConnectionMode = (typeof CONNECTION_MODES)[number];

/**
 * The scheduled ping results that count as the API failing in the availability record
 * (docs/dashboards.md, "Error budget"): not 401 or 429, which are about our key and our rate.
 */
export const AVAILABILITY_FAILURES: readonly PingResult[] = [
  'server_error',
  'timeout',
  'network_error',
  'unexpected_status',
  'invalid_body',
];

/**
 * The scheduled ping results that start a confirmation sequence (besides critical latency): the
 * API failing or not answering. 401, 429, unexpected_status and invalid_body do not: confirmation
 * serves the latency and down pages, which do not count them.
 */
export const CONFIRM_TRIGGER_RESULTS: readonly PingResult[] = [
  'server_error',
  'timeout',
  'network_error',
];

/** Confirmation pings' defaults (docs/configuration.md, `ping.confirm`). */
export const CONFIRM_DEFAULTS = {
  enabled: true,
  interval: '10s',
  window: '3m',
  successes: 3,
} as const;

export interface PingConfirmConfig {
  intervalMs: number;
  windowMs: number;
  successes: number;
}

export interface PingFacts {
  result: PingResult;
  durationMs: number;
  phases: PhaseTimings;
  /** Whether this ping opened its connection (connect, and TLS on https, were measured). */
  connectionOpened: boolean;
  up: boolean;
  latencyClass: LatencyClass | null;
}

const metrics = {
  pingAttempts: {
    name: 'isa_ping_attempts_total',
    help: 'Ping attempts by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(PING_RESULTS) },
  },
  pingDuration: {
    name: 'isa_ping_duration_seconds',
    help: 'Duration of every ping attempt; timeouts are observed at their elapsed time.',
    type: 'histogram',
    labels: ['environment'],
    buckets: PING_BUCKETS,
    configuredBounds: { thresholds: true, pastTimeout: true },
  },
  pingPhaseDuration: {
    name: 'isa_ping_phase_duration_seconds',
    help: 'Ping duration split into phases: resolve, connect, tls, processing (time to first byte), transfer.',
    type: 'histogram',
    labels: ['environment', 'phase'],
    knownValues: { phase: PHASES },
    // `resolve` starts at 0 only where the base URL's host is a name (vocabulary.ts).
    environmentScoped: { phase: 'phases' },
    buckets: PHASE_BUCKETS,
  },
  pingLastDuration: {
    name: 'isa_ping_last_duration_seconds',
    help: 'Duration of the last ping attempt.',
    type: 'gauge',
    labels: ['environment'],
  },
  pingLastAttempt: {
    name: 'isa_ping_last_attempt_timestamp_seconds',
    help: 'Unix time of the last ping attempt.',
    type: 'gauge',
    labels: ['environment'],
  },
  pingUp: {
    name: 'isa_ping_up',
    help: '1 if the last ping got a valid 200 {message, timestamp}, else 0.',
    type: 'gauge',
    labels: ['environment'],
  },
  latencyThreshold: {
    name: 'isa_latency_threshold_seconds',
    help: 'Configured ping latency thresholds.',
    type: 'gauge',
    labels: ['environment', 'level'],
    knownValues: { level: THRESHOLD_LEVELS },
  },
  pingConnectionsOpened: {
    name: 'isa_ping_connections_opened_total',
    help: 'Pings that opened a new connection (their connect and TLS phases were measured).',
    type: 'counter',
    labels: ['environment'],
  },
  pingInterval: {
    name: 'isa_ping_interval_seconds',
    help: 'Configured ping interval, for expected-count denominators in rules.',
    type: 'gauge',
    labels: ['environment'],
  },
  // Confirmation pings: a family of their own, so every query of the scheduled ones is unchanged.
  pingConfirmAttempts: {
    name: 'isa_ping_confirm_attempts_total',
    help: 'Confirmation ping attempts (pings a slow or failed scheduled ping started) by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(PING_RESULTS) },
    // From 0 only the results the rules read: `ok` and those that say "down". A confirmation
    // ping answered 401, 429, another status or a bad body appears under that result when first
    // seen (scheduled pings count those from 0, in isa_ping_attempts_total): four more zero
    // series in every environment were 0.32 MB of /metrics at 1000 (bench/README.md).
    startAtZero: { result: ['ok', ...CONFIRM_TRIGGER_RESULTS] },
  },
  pingConfirmDuration: {
    name: 'isa_ping_confirm_duration_seconds',
    help: 'Duration of every confirmation ping; timeouts are observed at their elapsed time.',
    type: 'histogram',
    labels: ['environment'],
    buckets: PING_BUCKETS,
    // The rules read one bound of it: the configured critical threshold, exactly (and +Inf).
    thresholdBuckets: 'critical',
  },
  pingConfirmSequences: {
    name: 'isa_ping_confirm_sequences_total',
    help: 'Ended confirmation sequences by how they ended: recovered, window_elapsed or stopped.',
    type: 'counter',
    labels: ['environment', 'end'],
    knownValues: { end: FOLLOW_UP_ENDS },
  },
  pingConfirmActive: {
    name: 'isa_ping_confirm_active',
    help: '1 while a confirmation sequence runs, else 0.',
    type: 'gauge',
    labels: ['environment'],
  },
} as const;

interface ParsedConfirm {
  enabled?: boolean | undefined;
  interval?: number | undefined;
  window: number;
  successes: number;
}

const DEFAULT_CONFIRM_INTERVAL_MS = parseDuration(CONFIRM_DEFAULTS.interval) ?? 10_000;

/** `ping.confirm`: on by default; its window must hold at least one confirmation ping. */
const confirmSchema = z
  .strictObject({
    // Both optional, to tell a default from a choice (see `confirmPolicy`).
    enabled: z.boolean().optional(),
    // Timer-driven, not cron: any duration of at least 1 s.
    interval: timerInterval().optional(),
    window: positiveDuration().prefault(CONFIRM_DEFAULTS.window),
    successes: z
      .number()
      .int({
        error: (issue) => `must be a whole number of at least 1 (got ${String(issue.input)})`,
      })
      .min(1, {
        error: (issue) => `must be a whole number of at least 1 (got ${String(issue.input)})`,
      })
      .default(CONFIRM_DEFAULTS.successes),
  })
  .superRefine(
    (value, issues) => {
      const v = value as Loose;
      notShorterThan(
        { window: v['window'], interval: v['interval'] ?? DEFAULT_CONFIRM_INTERVAL_MS },
        issues,
        'window',
        'interval',
        'ping.confirm',
      );
    },
    { when: (payload) => isRecord(payload.value) },
  );

/**
 * The confirmation settings of a parsed ping section (read loosely: other keys may have failed),
 * or null when they are off. Confirmation pings come between scheduled ones, so their interval
 * must be the shorter: a configured `enabled: true` or `interval` that is not is an error
 * (`explicit`); with every key at its default, a ping interval of 10 s or less already pings as
 * often as confirmation would, and confirmation is off.
 */
function confirmPolicy(v: Loose): { intervalMs: number; explicit: boolean; on: boolean } | null {
  const confirm = v['confirm'];
  if (!isRecord(confirm) || confirm['enabled'] === false) return null;
  const interval = confirm['interval'];
  const intervalMs = isMs(interval) ? interval : DEFAULT_CONFIRM_INTERVAL_MS;
  const explicit = confirm['enabled'] === true || isMs(interval);
  const pingInterval = v['interval'];
  return { intervalMs, explicit, on: isMs(pingInterval) && intervalMs < pingInterval };
}

function confirmFasterThanPings(v: Loose, issues: Issues): void {
  const policy = confirmPolicy(v);
  const pingInterval = v['interval'];
  if (policy === null || policy.on || !policy.explicit || !isMs(pingInterval)) return;
  issues.addIssue({
    code: 'custom',
    path: ['confirm', 'interval'],
    message: `must be shorter than ping.interval (${formatDuration(pingInterval)}), got ${formatDuration(policy.intervalMs)}${isMs(asLoose(v['confirm'])['interval']) ? '' : ' (the default)'}`,
  });
}

export const pingCheck = defineCheck({
  name: 'ping',
  // request_timeout defaults to timeout: a ping run is one request. A new connection per ping by
  // default: at the default 60 s most servers have closed an idle connection anyway, so `reuse`
  // would measure a connect sometimes and not other times; `new` measures the same thing every
  // time, as blackbox_exporter does (docs/configuration.md).
  config: checkSection({
    name: 'ping',
    defaults: { enabled: true, interval: '60s', timeout: '10s' },
    shape: {
      connection: z.enum(CONNECTION_MODES).default('new'),
      confirm: confirmSchema.prefault({}),
    },
    docs: {
      summary: 'the `GET /ping` check',
      keys: {
        timeout: {
          meaning:
            "the run's deadline is this plus 1 s, so the request's own timeout fires first. Longer than 15 s, it adds a bucket bound at twice itself to `isa_ping_duration_seconds`",
        },
        request_timeout: { meaning: "the ping request's timeout" },
        connection: {
          type: 'string',
          meaning:
            '`new` opens a connection for every ping and closes it after, as blackbox_exporter does, so connect and TLS are in every measurement; `reuse` keeps one alive between pings. `new` is the default because at a 60 s interval most servers close an idle connection anyway, so `reuse` would measure a connect on some pings and not on others. Each ping reports which it did (`connection`: `opened` or `reused` in `check --json` and `/api/status`; `isa_ping_connections_opened_total`)',
        },
        confirm: {
          type: 'mapping',
          meaning:
            'confirmation pings after a slow or failed scheduled ping. See [Confirmation pings](#confirmation-pings)',
        },
        'confirm.enabled': {
          type: 'boolean',
          default: `\`${String(CONFIRM_DEFAULTS.enabled)}\` where \`ping.interval\` is longer than \`ping.confirm.interval\``,
          meaning:
            '`false` switches them off; `true` with an interval not shorter than `ping.interval` is an error',
        },
        'confirm.interval': {
          type: 'duration',
          default: `\`${CONFIRM_DEFAULTS.interval}\``,
          meaning:
            'at least `1s`, shorter than `ping.interval` (an error when set; with every key at its default, a `ping.interval` of 10 s or less turns confirmation off, as scheduled pings are already that frequent)',
        },
        'confirm.window': {
          type: 'duration',
          meaning:
            'greater than 0, not shorter than `ping.confirm.interval`; the sequence ends this long after the last scheduled ping that started it',
        },
        'confirm.successes': {
          type: 'integer',
          meaning: 'at least 1; the sequence ends after this many good confirmation pings in a row',
        },
      },
    },
    refine: confirmFasterThanPings,
    extraGaps: (v) => {
      const policy = confirmPolicy(v);
      return policy?.on === true ? [{ key: 'ping.confirm.interval', ms: policy.intervalMs }] : [];
    },
    toConfig: (parsed: {
      interval: number;
      connection: ConnectionMode;
      confirm: ParsedConfirm;
    }) => {
      const policy = confirmPolicy(parsed as Loose);
      const confirm: PingConfirmConfig | null =
        policy?.on === true
          ? {
              intervalMs: policy.intervalMs,
              windowMs: parsed.confirm.window,
              successes: parsed.confirm.successes,
            }
          : null;
      return { connection: parsed.connection, confirm };
    },
    // Every ping, and every confirmation ping while a sequence runs, takes a token kept for it.
    firstRequestsPerSecond: (c) =>
      1000 / c.intervalMs + (c.confirm === null ? 0 : 1000 / c.confirm.intervalMs),
  }),
  metrics,
  operations: ['ping'],
  // A body against the spec is the ping's own verdict (`invalid_body`), not a contract check: a
  // response_schema count would repeat isa_ping_attempts_total, three series per environment.
  contractChecks: [],
  // A ping's fire time is part of what it measures: it never queues behind another check's polls.
  budgetPriority: 'first',
  // One request per run: isa_ping_attempts_total counts it, isa_ping_duration_seconds times it.
  ownRunMetrics: true,
  summaryKeys: ['latency_class', 'connection'],
  availability: { failures: AVAILABILITY_FAILURES },
  async run(ctx) {
    await ctx.acquireBudget();
    const response = await ping(ctx.client, {
      timeoutMs: ctx.config.requestTimeoutMs,
      signal: ctx.signal,
      correlationId: ctx.correlationId,
      freshConnection: ctx.config.connection === 'new',
    });
    const step = ctx.step('ping', response);
    const result = pingResult(ctx, response, step);
    return {
      outcome: result === 'ok' ? 'pass' : 'fail',
      reason: runReason(result, response),
      facts: {
        result,
        durationMs: response.durationMs,
        phases: response.phases,
        connectionOpened: response.connectionOpened,
        up: result === 'ok',
        latencyClass: pingLatencyClass(ctx, response),
      } satisfies PingFacts,
    };
  },
  summary: (facts) => ({
    latency_class: facts?.latencyClass ?? null,
    connection: facts ? (facts.connectionOpened ? 'opened' : 'reused') : null,
  }),
  trace: (facts) => (facts?.latencyClass ? [`latency ${facts.latencyClass}`] : []),
  details: (facts) =>
    Object.fromEntries(phaseDurations(facts?.phases).map(([phase, ms]) => [`${phase}_ms`, ms])),
  page: { headline: { classKey: 'latency_class' }, latencyChart: true },
  record(facts, sink, times) {
    sink.inc(metrics.pingAttempts, { result: facts.result });
    // Every attempt, timeouts included at their elapsed time: a hanging API is also a slow one.
    sink.observe(metrics.pingDuration, {}, seconds(facts.durationMs));
    for (const [phase, ms] of phaseDurations(facts.phases)) {
      sink.observe(metrics.pingPhaseDuration, { phase }, seconds(ms));
    }
    sink.set(metrics.pingLastDuration, {}, seconds(facts.durationMs));
    sink.set(metrics.pingLastAttempt, {}, times.startedAt / 1000);
    sink.set(metrics.pingUp, {}, facts.up ? 1 : 0);
    if (facts.connectionOpened) sink.inc(metrics.pingConnectionsOpened, {});
  },
  followUp: {
    policy: (config): FollowUpPolicy | null => config.confirm,
    starts: (facts) =>
      facts !== null &&
      (facts.latencyClass === 'critical' || CONFIRM_TRIGGER_RESULTS.includes(facts.result)),
    good: (facts) => facts !== null && facts.result === 'ok' && facts.latencyClass !== 'critical',
    metrics: [
      metrics.pingConfirmAttempts,
      metrics.pingConfirmDuration,
      metrics.pingConfirmSequences,
      metrics.pingConfirmActive,
    ],
    record(facts, sink) {
      sink.inc(metrics.pingConfirmAttempts, { result: facts.result });
      sink.observe(metrics.pingConfirmDuration, {}, seconds(facts.durationMs));
    },
    recordSequence(event, sink) {
      if (event.type === 'started') {
        sink.set(metrics.pingConfirmActive, {}, 1);
        return;
      }
      sink.inc(metrics.pingConfirmSequences, { end: event.end });
      sink.set(metrics.pingConfirmActive, {}, 0);
    },
    describe(sink) {
      sink.set(metrics.pingConfirmActive, {}, 0);
    },
  },
  describeConfig(config, environment, sink) {
    const t = environment.thresholds;
    sink.set(metrics.latencyThreshold, { level: 'expected' }, t.expectedMs / 1000);
    sink.set(metrics.latencyThreshold, { level: 'warning' }, t.warningMs / 1000);
    sink.set(metrics.latencyThreshold, { level: 'critical' }, t.criticalMs / 1000);
    sink.set(metrics.pingInterval, {}, config.intervalMs / 1000);
  },
});

/**
 * The ping's result. A body that does not match the spec fails it as `invalid_body`, and its step
 * says which field is wrong: the ping counts no `response_schema` contract check.
 */
function pingResult(ctx: CheckContext, response: ApiResponse, step: StepRecord): PingResult {
  const failure = requestFailure(response);
  if (failure !== null) return failure;
  if (response.bodyError) return 'invalid_body';
  const validation = validateBody(ctx, pingResponseSchema, response);
  if (validation.ok) return 'ok';
  step.error = `response body does not match the API schema at ${validation.violations[0]?.path ?? '(root)'}`;
  return 'invalid_body';
}

/** The run's reason: its result, and for the proxy's failures which one (a bounded code). */
function runReason(result: PingResult, response: ApiResponse): string | null {
  if (result === 'ok') return null;
  const code = response.transportError?.code;
  if (result === 'proxy_error') return `proxy_error: ${code ?? `HTTP ${response.statusCode}`}`;
  return result;
}

function pingLatencyClass(ctx: CheckContext, response: ApiResponse): LatencyClass | null {
  if (response.transportError) {
    const reason = response.transportError.reason;
    return reason === 'network_error' || reason === 'proxy_error' ? null : 'critical';
  }
  return classifyLatency(response.durationMs, ctx.environment.thresholds);
}

function seconds(ms: number): number {
  return ms / 1000;
}

/**
 * The phases of a ping that were measured, in ms. Phases that did not happen (no name to resolve,
 * no TLS on http://, no response at all) are absent and are not observed (not observed as 0).
 */
function phaseDurations(phases: PhaseTimings | undefined | null): Array<[Phase, number]> {
  if (phases === undefined || phases === null) return [];
  const present: Array<[Phase, number]> = [];
  for (const phase of PHASES) {
    const ms = phases[phase];
    if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) present.push([phase, ms]);
  }
  return present;
}
