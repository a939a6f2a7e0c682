/**
 * The ping check: `GET /ping`, classified against the environment's latency thresholds. A valid
 * answer is a 200 with `{message, timestamp}` (ISO-8601). A timeout counts as critical latency:
 * a hanging API is also a slow one.
 */
import type { ApiResponse, PhaseTimings } from '../api/client.js';
import { z } from 'zod';
import { pingResponseSchema } from '../api/schemas.js';
import { checkSection } from '../config/section.js';
import { PHASES, type Phase } from '../vocabulary.js';
import { defineCheck, type CheckContext } from './check.js';
import { checkResponseSchema } from './contract.js';
import { LATENCY_CLASSES, classifyLatency, type LatencyClass } from './latency.js';
import { REQUEST_FAILURES, requestFailure } from './request.js';

/** Result of one ping attempt. */
export const PING_RESULTS = ['ok', ...REQUEST_FAILURES, 'invalid_body'] as const;
export type PingResult = (typeof PING_RESULTS)[number];

/** The configured threshold levels exported as `isa_latency_threshold_seconds{level}`. */
export const THRESHOLD_LEVELS = ['expected', 'warning', 'critical'] as const;

export { LATENCY_CLASSES, type LatencyClass };

/** Ping latency buckets: boundaries exactly at the 0.1/0.5/1 s thresholds, past the timeout. */
export const PING_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 10, 30] as const;
/**
 * Phase buckets: 5 and 25 ms tell a nearby network from a distant one (resolve, connect, tls);
 * 0.1, 0.5 and 1 s are the API's thresholds (processing). Five, not twelve: the phase histogram is
 * five series per environment, most of the samples of a ping-only environment, and what
 * dashboards and runbooks read from it is each phase's mean (`_sum` / `_count`).
 */
export const PHASE_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1] as const;

/**
 * How a ping gets its connection: `new` opens one for every ping and closes it after (as
 * blackbox_exporter does), so connect and TLS are in every measurement; `reuse` keeps one alive
 * between pings, so they are in none unless the server closed it meanwhile.
 */
export const CONNECTION_MODES = ['new', 'reuse'] as const;
export type ConnectionMode = (typeof CONNECTION_MODES)[number];

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
    knownValues: { result: PING_RESULTS },
  },
  pingDuration: {
    name: 'isa_ping_duration_seconds',
    help: 'Duration of every ping attempt; timeouts are observed at their elapsed time.',
    type: 'histogram',
    labels: ['environment'],
    buckets: PING_BUCKETS,
  },
  pingPhaseDuration: {
    name: 'isa_ping_phase_duration_seconds',
    help: 'Ping duration split into phases: resolve, connect, tls, processing (time to first byte), transfer.',
    type: 'histogram',
    labels: ['environment', 'phase'],
    knownValues: { phase: PHASES },
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
} as const;

export const pingCheck = defineCheck({
  name: 'ping',
  // request_timeout defaults to timeout: a ping run is one request. A new connection per ping by
  // default: at the default 60 s most servers have closed an idle connection anyway, so `reuse`
  // would measure a connect sometimes and not other times; `new` measures the same thing every
  // time, as blackbox_exporter does (docs/configuration.md).
  config: checkSection({
    name: 'ping',
    defaults: { enabled: true, interval: '60s', timeout: '10s' },
    shape: { connection: z.enum(CONNECTION_MODES).default('new') },
    toConfig: (parsed: { connection: ConnectionMode }) => ({ connection: parsed.connection }),
  }),
  metrics,
  operations: ['ping'],
  contractChecks: ['response_schema'],
  summaryKeys: ['latency_class', 'connection'],
  async run(ctx) {
    await ctx.acquireBudget();
    const response = await ctx.client.ping({
      timeoutMs: ctx.config.requestTimeoutMs,
      signal: ctx.signal,
      correlationId: ctx.correlationId,
      freshConnection: ctx.config.connection === 'new',
    });
    ctx.step('ping', response);
    const result = pingResult(ctx, response);
    return {
      outcome: result === 'ok' ? 'pass' : 'fail',
      reason: result === 'ok' ? null : result,
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
  describeConfig(config, environment, sink) {
    const t = environment.thresholds;
    sink.set(metrics.latencyThreshold, { level: 'expected' }, t.expectedMs / 1000);
    sink.set(metrics.latencyThreshold, { level: 'warning' }, t.warningMs / 1000);
    sink.set(metrics.latencyThreshold, { level: 'critical' }, t.criticalMs / 1000);
    sink.set(metrics.pingInterval, {}, config.intervalMs / 1000);
  },
});

function pingResult(ctx: CheckContext, response: ApiResponse): PingResult {
  const failure = requestFailure(response);
  if (failure !== null) return failure;
  if (response.bodyError) return 'invalid_body';
  return checkResponseSchema(ctx, pingResponseSchema, response).ok ? 'ok' : 'invalid_body';
}

function pingLatencyClass(ctx: CheckContext, response: ApiResponse): LatencyClass | null {
  if (response.transportError) {
    return response.transportError.reason === 'network_error' ? null : 'critical';
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
