import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { pingResponseSchema } from '../../src/checks/ping/endpoint.js';
import { validateResponse } from '../../src/api/validate.js';

describe('validateResponse', () => {
  it('accepts a valid ping body', () => {
    const result = validateResponse(pingResponseSchema, {
      message: 'pong',
      timestamp: '2026-03-01T12:00:00Z',
    });
    expect(result).toEqual({
      ok: true,
      data: { message: 'pong', timestamp: '2026-03-01T12:00:00Z' },
      violations: [],
      unknownFields: [],
    });
  });

  it('names each violated field by its dotted path', () => {
    const result = validateResponse(pingResponseSchema, { message: 7 });
    expect(result.ok).toBe(false);
    expect(result.data).toBeUndefined();
    expect(result.violations.map((v) => v.path).sort()).toEqual(['message', 'timestamp']);
  });

  it('reports a body that is not an object at the root', () => {
    const result = validateResponse(pingResponseSchema, undefined);
    expect(result.violations.map((v) => v.path)).toEqual(['(root)']);
  });

  it('lists unknown fields apart, inside arrays and nullable objects too', () => {
    const schema = z.object({
      items: z.array(z.object({ id: z.string() })),
      owner: z.object({ name: z.string() }).nullable(),
    });
    const result = validateResponse(schema, {
      items: [{ id: 'a' }, { id: 'b', extra: 1 }],
      owner: { name: 'n', nick: 'x' },
      added: true,
    });
    expect(result.ok).toBe(true);
    expect(result.unknownFields.sort()).toEqual(['added', 'items.1.extra', 'owner.nick']);
  });
});
