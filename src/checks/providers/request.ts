import type { ApiResponse, ApiTransport, RequestOptions } from '../../kernel/api.js';

/** `GET /service_providers`, the tracked provider list. */
export function serviceProviders(client: ApiTransport, o: RequestOptions): Promise<ApiResponse> {
  return client.request({
    ...o,
    operation: 'service_providers',
    method: 'GET',
    path: '/service_providers',
  });
}
