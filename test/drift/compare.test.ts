import { describe, expect, it } from 'vitest';
import { compareShapes, type Finding } from '../../src/drift/compare.js';
import { emptyShape, learn, shapeOf, type JsonType, type Shape } from '../../src/drift/shape.js';
import { creation, response, TOKEN } from './bodies.js';

/** A baseline learned from the healthy answers: available and pending, both forms of `data`. */
function baseline(): Shape {
  const shape = emptyShape();
  for (let i = 0; i < 5; i += 1) {
    learn(shape, response(creation(), { bytes: 900 + i * 10 }));
    learn(shape, response(creation({ qualify_status: 'pending', data: [] }), { bytes: 400 }));
  }
  return shape;
}

function compare(body: unknown, options: Parameters<typeof response>[1] = {}): Finding[] {
  return compareShapes(baseline(), shapeOf(response(body, options)));
}

function kinds(findings: Finding[]): string[] {
  return findings.map((f) => `${f.severity} ${f.kind} ${f.path}`).sort();
}

describe('differences from a baseline, by severity', () => {
  it('finds none in a healthy answer: other ids, text, timestamps, counts and prices', () => {
    const other = creation({
      message: 'Another message entirely',
      data: [{ name: 'Other Net', type: 'fcc_provider', min_price: 1 }],
      meta: {
        session_token: 'sess_other',
        session_status: 'open',
        session_params: { street1: '9 Elm', street2: null, zip: '10001' },
        created_at: '2026-12-01T00:00:00Z',
        service_data_set: '20261201',
      },
    });
    expect(compare(other)).toEqual([]);
    expect(compare(creation({ qualify_status: 'pending', data: [] }), { bytes: 400 })).toEqual([]);
  });

  it('warns of a new enum value, but not of one the spec documents', () => {
    const found = compare(creation({ qualify_status: 'throttled' }));
    expect(found).toEqual([
      {
        kind: 'new_value',
        severity: 'warning',
        path: 'qualify_status',
        baseline: '"available", "pending"',
        seen: '"throttled"',
      },
    ]);
    const spec = {
      required: new Map(),
      documented: new Map([['qualify_status', ['available', 'no_service', 'pending', 'failed']]]),
    };
    const failed = shapeOf(response(creation({ qualify_status: 'failed' })));
    expect(compareShapes(baseline(), failed, spec)).toEqual([]);
  });

  it('warns of null where there never was null', () => {
    const meta = { ...(creation().meta as object), service_data_set: null };
    expect(kinds(compare(creation({ meta })))).toEqual([
      'warning became_null meta.service_data_set',
    ]);
  });

  it('warns of a type that widened or changed, but not of a null field that got a value', () => {
    const widened = creation({
      data: [
        { name: 'A', type: 'fcc_provider', min_price: '49.99' },
        { name: 'B', type: 'fcc_provider', min_price: 10 },
      ],
    });
    expect(kinds(compare(widened))).toEqual(['warning type_widened data[].min_price']);
    const meta = { ...(creation().meta as object), service_data_set: 20261101 };
    expect(kinds(compare(creation({ meta })))).toEqual([
      'warning type_changed meta.service_data_set',
    ]);
    const params = { street1: '1 Main St', street2: 'Apt 4', zip: '80202' };
    const filled = creation({ meta: { ...(creation().meta as object), session_params: params } });
    expect(compare(filled)).toEqual([]);
  });

  it('warns of a field always present that is gone, but not of one present only sometimes', () => {
    const { request_status: _dropped, ...withoutStatus } = creation();
    expect(kinds(compare(withoutStatus))).toEqual(['warning field_gone request_status']);
    const { qualify_status: _sometimes, ...withoutQualify } = creation();
    const shape = baseline();
    learn(shape, response(withoutQualify));
    expect(compareShapes(shape, shapeOf(response(withoutQualify)))).toEqual([]);
  });

  it('reports a new field as info, once at its top', () => {
    const found = compare(creation({ migration: { target: 'v2', at: '2027-01-01' } }));
    expect(kinds(found)).toEqual(['info new_field migration']);
  });

  it('warns of a relied-on header gone or another content type; a new header is info', () => {
    const headers = { 'Content-Type': 'text/html', 'X-Request-Id': 'r', 'X-Deprecation': 'soon' };
    expect(kinds(compare(creation(), { headers }))).toEqual([
      'info new_header header:x-deprecation',
      'warning content_type_changed header:content-type',
      'warning header_gone header:session_token',
    ]);
  });

  it('warns of a body far outside the sizes seen', () => {
    expect(kinds(compare(creation(), { bytes: 10_000 }))).toEqual([
      'warning size_out_of_range (size)',
    ]);
    expect(compare(creation(), { bytes: 1500 })).toEqual([]);
    expect(kinds(compare(creation(), { bytes: 50 }))).toEqual(['warning size_out_of_range (size)']);
  });

  it('makes a required field gone, or of a type the spec does not allow, breaking', () => {
    const spec = {
      required: new Map<string, JsonType[]>([
        ['request_status', ['string']],
        ['meta.service_data_set', ['string']],
      ]),
      documented: new Map(),
    };
    const { request_status: _dropped, ...withoutStatus } = creation();
    const gone = compareShapes(baseline(), shapeOf(response(withoutStatus)), spec);
    expect(gone).toEqual([
      {
        kind: 'contract_violation',
        severity: 'breaking',
        path: 'request_status',
        baseline: 'always present',
        seen: 'absent',
      },
    ]);
    const meta = { ...(creation().meta as object), service_data_set: 20261101 };
    const changed = compareShapes(baseline(), shapeOf(response(creation({ meta }))), spec);
    expect(kinds(changed)).toEqual(['breaking contract_violation meta.service_data_set']);
    expect(JSON.stringify([gone, changed])).not.toContain(TOKEN);
  });
});
