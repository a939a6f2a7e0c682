/** Response bodies shaped after the spec's session envelope (../shared isa-api.md, "Response envelope"). */
import type { ObservedResponse } from '../../src/drift/shape.js';

export const TOKEN = 'sess_5f2c8a91d0b34e7f';

/** A creation response with two providers; `overrides` replace top-level fields. */
export function creation(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    message: 'Session created',
    request_status: 'ok',
    qualify_status: 'available',
    data: [
      { name: 'Fibre Co', type: 'fcc_provider', min_price: 4999 },
      { name: 'Fibre Co Lite', type: 'supplemental_brand', min_price: null },
    ],
    meta: {
      session_token: TOKEN,
      session_status: 'open',
      session_params: { street1: '1 Main St', street2: null, zip: '80202' },
      created_at: '2026-11-28T10:00:00Z',
      service_data_set: '20261101',
    },
    ...overrides,
  };
}

/** A response as the drift learner sees it. */
export function response(
  body: unknown,
  options: { bytes?: number; headers?: Record<string, string> } = {},
): ObservedResponse {
  return {
    body,
    bytes: options.bytes ?? 1000,
    headers: options.headers ?? {
      'Content-Type': 'application/json; charset=utf-8',
      session_token: TOKEN,
      'X-Request-Id': 'req-1',
      'Content-Length': '1000',
      Date: 'Sat, 28 Nov 2026 10:00:00 GMT',
    },
  };
}
