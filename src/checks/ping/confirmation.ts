/**
 * Confirmation pings (`ping.confirm`): which scheduled pings start a sequence, which confirmation
 * pings count as good, and their metrics (docs/configuration.md, "Confirmation pings").
 */
import { type FollowUp } from '../../kernel/check.js';
import { CONFIRM_TRIGGER_RESULTS, type PingFacts } from './facts.js';
import type { PingConfig } from './config.js';
import { metrics, seconds } from './metrics.js';

/** Confirmation pings (`ping.confirm`): a worrying scheduled ping starts a sequence of them. */
export const confirmation: FollowUp<PingConfig, PingFacts> = {
  policy: (config) => config.confirm,
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
};
