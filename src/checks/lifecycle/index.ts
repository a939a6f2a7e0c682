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
import { LIFECYCLE_OPERATIONS } from './endpoint.js';
import { defineCheck } from '../../kernel/check.js';
import { section, LIFECYCLE_AD_HOC } from './config.js';
import { metrics, recordLifecycle } from './metrics.js';
import { runLifecycle } from './run.js';
import {
  lifecycleSummary,
  lifecycleTrace,
  lifecycleDetails,
  LIFECYCLE_PAGE,
} from './presentation.js';

export {
  LIFECYCLE_RESULTS,
  type LifecycleResult,
  LIFECYCLE_STEPS,
  type LifecycleStep,
  QUALIFY_OUTCOMES,
  type QualifyOutcome,
  type LifecycleFacts,
} from './facts.js';
export {
  EXPECTATIONS,
  type AddressConfig,
  type LifecycleConfig,
  DEFAULT_ENV_ADDRESS,
  LIFECYCLE_PACED_REQUESTS,
} from './config.js';
export { POLL_STATUSES, QUALIFY_BUCKETS, STEP_BUCKETS, dataSetLabel } from './metrics.js';

export const lifecycleCheck = defineCheck({
  name: 'lifecycle',
  config: section,
  metrics,
  operations: LIFECYCLE_OPERATIONS,
  contractChecks: ['closed_session_gone', 'response_schema', 'session_token_header'],
  createsSessions: true,
  summaryKeys: ['qualify_status', 'service_data_set'],
  run: runLifecycle,
  summary: lifecycleSummary,
  trace: lifecycleTrace,
  details: lifecycleDetails,
  page: LIFECYCLE_PAGE,
  adHoc: LIFECYCLE_AD_HOC,
  record: recordLifecycle,
});
