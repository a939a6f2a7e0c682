import { queryString } from '../../api/query-string.js';
import type { ApiResponse, ApiTransport, RequestOptions } from '../../kernel/api.js';

/** The census-geography parameters of `GET /coverage`, by parameter name without `[]`. */
export type CoverageQuery = Readonly<Record<string, readonly string[] | undefined>>;

/**
 * `GET /coverage` for census geographies, each value repeated as `name[]=value` as the API reads
 * it. Without any value it is the request the API must refuse (operation `coverage_no_geography`).
 */
export function coverage(
  client: ApiTransport,
  geography: CoverageQuery,
  o: RequestOptions,
): Promise<ApiResponse> {
  const given = Object.entries(geography).flatMap(([name, values]) =>
    values !== undefined && values.length > 0 ? [[name, values] as const] : [],
  );
  return client.request({
    ...o,
    operation: given.length > 0 ? 'coverage' : 'coverage_no_geography',
    method: 'GET',
    path: `/coverage${queryString(Object.fromEntries(given))}`,
  });
}
