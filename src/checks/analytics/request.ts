import { queryString } from '../../api/query-string.js';
import type { ApiResponse, ApiTransport, RequestOptions } from '../../kernel/api.js';

/**
 * `GET /analytics/sessions` with its query (`updated_since`, `page`, ...), each value encoded;
 * repeated values are sent as `name[]` parameters, as the API reads them.
 */
export function listAnalyticsSessions(
  client: ApiTransport,
  query: Readonly<Record<string, string | readonly string[]>>,
  o: RequestOptions,
): Promise<ApiResponse> {
  return client.request({
    ...o,
    operation: 'list_analytics_sessions',
    method: 'GET',
    path: `/analytics/sessions${queryString(query)}`,
  });
}

/** `GET /analytics/sessions/{id}`: a session's analytics detail, by UUID or session token. */
export function getAnalyticsSession(
  client: ApiTransport,
  id: string,
  o: RequestOptions,
): Promise<ApiResponse> {
  return client.request({
    ...o,
    operation: 'get_analytics_session',
    method: 'GET',
    path: `/analytics/sessions/${encodeURIComponent(id)}`,
  });
}
