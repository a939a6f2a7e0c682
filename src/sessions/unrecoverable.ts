/**
 * How a session that cannot be closed is reported: a create was sent (its intent is in the
 * ledger) but no token ever arrived, because the process died or the answer never came. The API
 * may hold an open session nobody can close; only the API operator can find and close it, from the
 * time, the correlation id (sent as `X-Correlation-Id` and `X-Request-Id`), the campaign and the
 * address.
 */
import type { CreateIntent } from './ledger.js';

/** The log message; the runbook of `IsaSyntheticSessionsUnrecoverable` says what to do. */
export const UNRECOVERABLE_MESSAGE =
  'a synthetic session may be open on the API but its token never arrived, so it cannot be closed: ask the API operator to close it (runbook: IsaSyntheticSessionsUnrecoverable)';

/** The fields the API operator needs to find the session. */
export function unrecoverableFields(intent: CreateIntent): Record<string, unknown> {
  return {
    environment: intent.environment,
    createdAt: new Date(intent.createdAt).toISOString(),
    correlationId: intent.correlationId,
    campaignId: intent.campaignId,
    address: intent.address,
  };
}
