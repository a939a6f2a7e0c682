import { describe, expect, it } from 'vitest';
import { emptyShape, learn, LIMITS, merge, parentPath, shapeOf } from '../../src/drift/shape.js';
import { creation, response } from './bodies.js';

describe('the shape of a response', () => {
  it('records every path with its types, summarising arrays by their items', () => {
    const shape = shapeOf(response(creation()));
    expect(Object.keys(shape.paths)).toEqual(
      expect.arrayContaining(['(root)', 'data', 'data[]', 'data[].name', 'meta.session_token']),
    );
    expect(shape.paths['data[]']).toMatchObject({ types: ['object'], count: 2, objects: 2 });
    expect(shape.paths['meta.session_params.street2']?.types).toEqual(['null']);
    expect(shape.paths['data[].min_price']?.types).toEqual(['null', 'number']);
  });

  it('keeps the values of enum-like fields only, never free text, identifiers or timestamps', () => {
    const shape = shapeOf(response(creation()));
    expect(shape.paths['qualify_status']?.values).toEqual(['available']);
    expect(shape.paths['meta.session_status']?.values).toEqual(['open']);
    expect(shape.paths['data[].type']?.values).toEqual(['fcc_provider', 'supplemental_brand']);
    expect(shape.paths['message']?.values).toBeUndefined();
    expect(shape.paths['meta.session_token']?.values).toBeUndefined();
    expect(shape.paths['meta.created_at']?.values).toBeUndefined();
  });

  it('records headers by name without the transport ones, content types and the size range', () => {
    const shape = emptyShape();
    learn(shape, response(creation(), { bytes: 900 }));
    learn(shape, response(creation(), { bytes: 1200 }));
    expect(shape.headers).toEqual({ 'content-type': 2, session_token: 2, 'x-request-id': 2 });
    expect(shape.contentTypes).toEqual(['application/json']);
    expect(shape.size).toEqual({ min: 900, max: 1200 });
    expect(shape.responses).toBe(2);
  });

  it('stays within its bounds whatever the body holds, and says it was truncated', () => {
    const wide = Object.fromEntries(
      Array.from({ length: 1000 }, (_, i) => [`field_${i}`, { type: `t${i}` }]),
    );
    const shape = shapeOf(response(wide));
    expect(Object.keys(shape.paths).length).toBe(LIMITS.paths);
    expect(shape.truncated).toBe(true);

    const many = { data: Array.from({ length: 100 }, (_, i) => ({ type: `kind-${i}` })) };
    const values = shapeOf(response(many)).paths['data[].type']?.values ?? [];
    expect(values).toHaveLength(LIMITS.valuesPerPath);

    let deep: unknown = 'bottom';
    for (let i = 0; i < 100; i += 1) deep = { inner: deep };
    expect(Object.keys(shapeOf(response(deep)).paths).length).toBe(LIMITS.depth + 1);
  });

  it('merges two shapes into what both saw', () => {
    const into = shapeOf(response(creation(), { bytes: 500 }));
    const pending = creation({ qualify_status: 'pending', data: [] });
    merge(into, shapeOf(response(pending, { bytes: 300 })));
    expect(into.responses).toBe(2);
    expect(into.paths['qualify_status']?.values).toEqual(['available', 'pending']);
    expect(into.paths['(root)']?.objects).toBe(2);
    expect(into.size).toEqual({ min: 300, max: 500 });
  });

  it('names the object a field sits in', () => {
    expect(parentPath('meta.session_status')).toBe('meta');
    expect(parentPath('message')).toBe('(root)');
    expect(parentPath('data[].name')).toBe('data[]');
    expect(parentPath('data[]')).toBeNull();
    expect(parentPath('(root)')).toBeNull();
  });
});
