/** One ping run: a budget token, `GET /ping`, and its verdict against the thresholds. */
import type { ApiResponse } from '../../api/client.js';
import { pingResponseSchema } from './endpoint.js';
import { type CheckContext, type CheckOutcome, type StepRecord } from '../../kernel/check.js';
import { validateBody } from '../shared/contract.js';
import { classifyLatency, type LatencyClass } from '../../kernel/latency.js';
import { requestFailure } from '../shared/request.js';
import { ping } from './request.js';
import { PingResult, PingFacts } from './facts.js';
import { PingConfig } from './config.js';

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

/** One ping: a budget token, then `GET /ping`, judged against the environment's thresholds. */
export async function runPing(ctx: CheckContext<PingConfig>): Promise<CheckOutcome<PingFacts>> {
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
}
