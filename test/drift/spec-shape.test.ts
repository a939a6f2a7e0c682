import { describe, expect, it } from 'vitest';
import { sessionEnvelopeSchema } from '../../src/api/schemas.js';
import { z } from 'zod';
import { specShapeOf } from '../../src/api/spec-shape.js';
import { pingResponseSchema } from '../../src/checks/ping/endpoint.js';

/** A list answer of the API's kind: an array of items with an integer and an enumeration. */
const listSchema = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      units: z.number().int(),
      type: z.enum(['fcc_provider', 'supplemental_brand']),
    }),
  ),
});

describe("the spec's view of a response schema", () => {
  it('lists the required paths with their types, below arrays relative to each item', () => {
    const ping = specShapeOf(pingResponseSchema);
    expect(Object.fromEntries(ping.required)).toEqual({
      message: ['string'],
      timestamp: ['string'],
    });
    const list = specShapeOf(listSchema);
    expect(list.required.get('items')).toEqual(['array']);
    expect(list.required.get('items[].units')).toEqual(['number']);
  });

  it('documents the values of the enumerations, and knows optional and nullable fields', () => {
    const list = specShapeOf(listSchema);
    expect(list.documented.get('items[].type')).toEqual(['fcc_provider', 'supplemental_brand']);
    const envelope = specShapeOf(sessionEnvelopeSchema);
    expect(envelope.documented.get('qualify_status')).toEqual(
      expect.arrayContaining(['available', 'no_service', 'pending', 'failed', 'retry_later']),
    );
    expect(envelope.required.has('qualify_status')).toBe(false);
    expect(envelope.documented.get('request_status')).toEqual(['ok', 'warning', 'error']);
  });
});
