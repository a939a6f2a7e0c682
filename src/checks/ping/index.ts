/**
 * The ping check: `GET /ping`, classified against the environment's latency thresholds. A valid
 * answer is a 200 with `{message, timestamp}` (ISO-8601). A timeout counts as critical latency:
 * a hanging API is also a slow one.
 */
import { defineCheck } from '../../kernel/check.js';
import { PING_OPERATIONS } from './endpoint.js';
import { LATENCY_CLASSES, type LatencyClass } from '../../kernel/latency.js';
import { AVAILABILITY_FAILURES } from './facts.js';
import { section } from './config.js';
import { metrics, recordPing, describePing } from './metrics.js';
import { confirmation } from './confirmation.js';
import { runPing } from './run.js';
import { pingSummary, pingTrace, pingDetails, PING_PAGE } from './presentation.js';

export {
  PING_RESULTS,
  type PingResult,
  AVAILABILITY_FAILURES,
  CONFIRM_TRIGGER_RESULTS,
  type PingFacts,
} from './facts.js';
export {
  CONNECTION_MODES,
  type ConnectionMode,
  CONFIRM_DEFAULTS,
  type PingConfirmConfig,
  type PingConfig,
} from './config.js';
export { PING_BUCKETS, PHASE_BUCKETS } from './metrics.js';

export { LATENCY_CLASSES, type LatencyClass };

export const pingCheck = defineCheck({
  name: 'ping',
  config: section,
  metrics,
  operations: PING_OPERATIONS,
  // A body against the spec is the ping's own verdict (`invalid_body`), not a contract check: a
  // response_schema count would repeat isa_ping_attempts_total, three series per environment.
  contractChecks: [],
  // A ping's fire time is part of what it measures: it never queues behind another check's polls.
  budgetPriority: 'first',
  // One request per run: isa_ping_attempts_total counts it, isa_ping_duration_seconds times it.
  ownRunMetrics: true,
  summaryKeys: ['latency_class', 'connection'],
  availability: { failures: AVAILABILITY_FAILURES },
  run: runPing,
  summary: pingSummary,
  trace: pingTrace,
  details: pingDetails,
  page: PING_PAGE,
  record: recordPing,
  followUp: confirmation,
  describeConfig: describePing,
});
