/**
 * The faults that every check's single request classifies alike (src/checks/shared/request.ts,
 * `requestFailure`, and a body that breaks the spec), each with the result it gives and the
 * response code the check counts: a check's test runs them all against its own request.
 */
import type { Fault } from '../../src/simulator/index.js';

export const REQUEST_FAILURE_CASES: ReadonlyArray<readonly [Fault, string, string]> = [
  [{ kind: 'status', status: 500 }, 'server_error', '500'],
  [{ kind: 'status', status: 503 }, 'server_error', '503'],
  [{ kind: 'status', status: 401 }, 'unauthorized', '401'],
  [{ kind: 'status', status: 429 }, 'rate_limited', '429'],
  [{ kind: 'status', status: 404 }, 'unexpected_status', '404'],
  [{ kind: 'malformed' }, 'invalid_body', '200'],
  [{ kind: 'html' }, 'invalid_body', '200'],
  [{ kind: 'reset' }, 'network_error', 'none'],
  [{ kind: 'hang' }, 'timeout', 'none'],
];
