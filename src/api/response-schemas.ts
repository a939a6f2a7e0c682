/**
 * The spec's schema of each operation's successful answer, and of the error envelope: what the
 * drift of an operation is held to (docs/drift.md, "Severities"). The schemas of the operations
 * are the checks' (`Check.operations`), handed in by whoever holds the list of checks (the
 * registry's `RESPONSE_SCHEMAS`); the error envelope is the API's own. The views are made once, on
 * first use.
 */
import type { z } from 'zod';
import type { SpecView } from '../drift/compare.js';
import { errorEnvelopeSchema } from './schemas.js';
import { specShapeOf } from './spec-shape.js';

/** The spec's view of an operation's answers (or `error`), or undefined where it has none. */
export type ResponseSpecOf = (key: string) => SpecView | undefined;

/** The spec's views of the answers of `schemas` (by operation) and of the error envelope. */
export function responseSpecs(schemas: Readonly<Record<string, z.ZodType>>): ResponseSpecOf {
  const all = new Map<string, z.ZodType>([
    ...Object.entries(schemas),
    ['error', errorEnvelopeSchema],
  ]);
  const views = new Map<string, SpecView>();
  return (key) => {
    const known = views.get(key);
    if (known) return known;
    const schema = all.get(key);
    if (!schema) return undefined;
    const view = specShapeOf(schema);
    views.set(key, view);
    return view;
  };
}
