/**
 * The session endpoints of the ISA API. They are an API part, not one check's: the lifecycle check
 * creates and closes sessions, and the session ledger and reaper (`sessions/`) close what runs
 * left behind, so the requests are built here once, over the client's one generic call.
 */
import type { ApiResponse, ApiTransport, RequestOptions } from '../kernel/api.js';

function sessionPath(token: string): string {
  return `/sessions/${encodeURIComponent(token)}`;
}

/** `POST /sessions` with a session request body. */
export function createSession(
  client: ApiTransport,
  body: object,
  o: RequestOptions,
): Promise<ApiResponse> {
  return client.request({
    ...o,
    operation: 'create_session',
    method: 'POST',
    path: '/sessions',
    body,
  });
}

/** `GET /sessions/{token}`. */
export function getSession(
  client: ApiTransport,
  token: string,
  o: RequestOptions,
): Promise<ApiResponse> {
  return client.request({
    ...o,
    operation: 'get_session',
    method: 'GET',
    path: sessionPath(token),
  });
}

/** `GET /sessions/{token}/services/internet`, the qualification poll. */
export function pollServices(
  client: ApiTransport,
  token: string,
  o: RequestOptions,
): Promise<ApiResponse> {
  return client.request({
    ...o,
    operation: 'poll_services',
    method: 'GET',
    path: `${sessionPath(token)}/services/internet`,
  });
}

/** `DELETE /sessions/{token}`. */
export function closeSession(
  client: ApiTransport,
  token: string,
  o: RequestOptions,
): Promise<ApiResponse> {
  return client.request({
    ...o,
    operation: 'close_session',
    method: 'DELETE',
    path: sessionPath(token),
  });
}

/** `GET /sessions/{token}` after closing it; the API should answer 410. */
export function verifyGone(
  client: ApiTransport,
  token: string,
  o: RequestOptions,
): Promise<ApiResponse> {
  return client.request({
    ...o,
    operation: 'verify_gone',
    method: 'GET',
    path: sessionPath(token),
  });
}
