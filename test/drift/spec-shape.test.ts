import { describe, expect, it } from 'vitest';
import {
  pingResponseSchema,
  serviceProvidersResponseSchema,
  sessionEnvelopeSchema,
} from '../../src/api/schemas.js';
import { specShapeOf } from '../../src/api/spec-shape.js';

describe("the spec's view of a response schema", () => {
  it('lists the required paths with their types, below arrays relative to each item', () => {
    const ping = specShapeOf(pingResponseSchema);
    expect(Object.fromEntries(ping.required)).toEqual({
      message: ['string'],
      timestamp: ['string'],
    });
    const providers = specShapeOf(serviceProvidersResponseSchema);
    expect(providers.required.get('providers')).toEqual(['array']);
    expect(providers.required.get('providers[].total_residential_units')).toEqual(['number']);
  });

  it('documents the values of the enumerations, and knows optional and nullable fields', () => {
    const providers = specShapeOf(serviceProvidersResponseSchema);
    expect(providers.documented.get('providers[].type')).toEqual([
      'fcc_provider',
      'supplemental_brand',
    ]);
    const envelope = specShapeOf(sessionEnvelopeSchema);
    expect(envelope.documented.get('qualify_status')).toEqual(
      expect.arrayContaining(['available', 'no_service', 'pending', 'failed', 'retry_later']),
    );
    expect(envelope.required.has('qualify_status')).toBe(false);
    expect(envelope.documented.get('request_status')).toEqual(['ok', 'warning', 'error']);
  });
});
