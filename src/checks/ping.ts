/**
 * The ping check: `GET /ping`, classified against the environment's latency thresholds. A valid
 * answer is a 200 with `{message, timestamp}` (ISO-8601). A timeout counts as critical latency:
 * a hanging API is also a slow one.
 */
import type { ApiResponse } from '../api/client.js';
import { pingResponseSchema } from '../api/schemas.js';
import type { Check, CheckContext, CheckOutcome } from './check.js';
import { checkResponseSchema } from './contract.js';
import { classifyLatency } from './latency.js';
import type { LatencyClass, PingResult } from './results.js';

export const pingCheck: Check = {
  name: 'ping',
  async run(ctx: CheckContext): Promise<CheckOutcome> {
    await ctx.acquireBudget();
    const response = await ctx.client.ping({
      timeoutMs: ctx.environment.ping.timeoutMs,
      signal: ctx.signal,
      correlationId: ctx.correlationId,
    });
    ctx.step('ping', response);
    const result = pingResult(ctx, response);
    const latencyClass = pingLatencyClass(ctx, response);
    return {
      outcome: result === 'ok' ? 'pass' : 'fail',
      reason: result === 'ok' ? null : result,
      latencyClass,
      ping: {
        result,
        durationMs: response.durationMs,
        phases: response.phases,
        up: result === 'ok',
      },
    };
  },
};

function pingResult(ctx: CheckContext, response: ApiResponse): PingResult {
  if (response.transportError) {
    // An abort here is the run's own deadline: the API did not answer in time.
    return response.transportError.reason === 'network_error' ? 'network_error' : 'timeout';
  }
  const status = response.statusCode ?? 0;
  if (status === 200) {
    if (response.bodyError) return 'invalid_body';
    return checkResponseSchema(ctx, pingResponseSchema, response).ok ? 'ok' : 'invalid_body';
  }
  if (status === 401) return 'unauthorized';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server_error';
  return 'unexpected_status';
}

function pingLatencyClass(ctx: CheckContext, response: ApiResponse): LatencyClass | null {
  if (response.transportError) {
    return response.transportError.reason === 'network_error' ? null : 'critical';
  }
  return classifyLatency(response.durationMs, ctx.environment.thresholds);
}
