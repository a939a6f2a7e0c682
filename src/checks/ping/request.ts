import type { ApiResponse, ApiTransport, RequestOptions } from '../../kernel/api.js';

/** `GET /ping`, the request the ping check times. */
export function ping(client: ApiTransport, o: RequestOptions): Promise<ApiResponse> {
  return client.request({ ...o, operation: 'ping', method: 'GET', path: '/ping' });
}
