/**
 * What a lifecycle run finds: its bounded results, steps and qualify outcomes (the label values of
 * its metrics) and its facts.
 */
import { type QualifyStatus } from '../../api/schemas.js';

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

export interface LifecycleFacts {
  result: LifecycleResult;
  qualifyOutcome: QualifyOutcome | null;
  qualifyDurationMs: number | null;
  stepDurationsMs: Partial<Record<LifecycleStep, number>>;
  /** qualify_status of the creation response and of every poll, in order. */
  pollStatuses: QualifyStatus[];
  serviceDataSet: string | null;
}
