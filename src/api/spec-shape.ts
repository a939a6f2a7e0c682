/**
 * What the spec's response schemas say in the terms of a learned shape (docs/drift.md,
 * "Severities"): the paths a response must carry with the JSON types allowed there, and the values
 * an enum-like field may take. Drift reads it so that a required field gone is breaking rather
 * than a warning, and a documented value is never new.
 */
import { z } from 'zod';
import type { SpecView } from '../drift/compare.js';
import { childPath, type JsonType } from '../drift/shape.js';

interface Walk {
  required: Map<string, JsonType[]>;
  documented: Map<string, string[]>;
}

/**
 * The spec's view of a response schema, keyed by shape paths (`data[].type`): the paths every
 * response has where the objects around them are, with their allowed types, and the documented
 * values of its enumerations.
 */
export function specShapeOf(schema: z.ZodType): SpecView {
  const walk: Walk = { required: new Map(), documented: new Map() };
  visit(schema, '(root)', true, walk);
  return walk;
}

function visit(schema: z.ZodType, path: string, required: boolean, walk: Walk): void {
  const { inner, optional, nullable } = unwrap(schema);
  const types = typesOf(inner);
  if (required && !optional && path !== '(root)') {
    walk.required.set(path, nullable ? [...types, 'null'] : types);
  }
  if (inner instanceof z.ZodEnum) walk.documented.set(path, inner.options.map(String));
  if (inner instanceof z.ZodObject) {
    for (const [field, child] of Object.entries(inner.shape as Record<string, z.ZodType>)) {
      visit(child, childPath(path, field), required && !optional, walk);
    }
  } else if (inner instanceof z.ZodArray) {
    // Items may be absent (an empty list), so nothing under them is required of every response:
    // only of every item, which is what the shape's presence counts measure.
    visit(inner.element as z.ZodType, `${path}[]`, required && !optional, walk);
  }
}

function unwrap(schema: z.ZodType): { inner: z.ZodType; optional: boolean; nullable: boolean } {
  let inner = schema;
  let optional = false;
  let nullable = false;
  for (;;) {
    if (inner instanceof z.ZodOptional) optional = true;
    else if (inner instanceof z.ZodNullable) nullable = true;
    else if (!(inner instanceof z.ZodDefault)) return { inner, optional, nullable };
    inner = (inner as z.ZodOptional<z.ZodType>).unwrap() as z.ZodType;
  }
}

/** The JSON types a schema allows; read from zod's definition, so string formats count too. */
function typesOf(schema: z.ZodType): JsonType[] {
  const kind = schema._zod.def.type;
  if (kind === 'string' || kind === 'enum') return ['string'];
  if (kind === 'number' || kind === 'boolean') return [kind];
  if (kind === 'array') return ['array'];
  if (kind === 'object' || kind === 'record') return ['object'];
  if (schema instanceof z.ZodLiteral) {
    return [...new Set([...schema.values].map((value) => jsonTypeOfLiteral(value)))];
  }
  if (schema instanceof z.ZodUnion) {
    const options = schema.options as readonly z.ZodType[];
    return [...new Set(options.flatMap((option) => typesOf(unwrap(option).inner)))];
  }
  // z.unknown() and anything else: the spec does not say, so any type is allowed.
  return ['string', 'number', 'boolean', 'null', 'object', 'array'];
}

function jsonTypeOfLiteral(value: unknown): JsonType {
  if (value === null) return 'null';
  const type = typeof value;
  return type === 'number' || type === 'boolean' ? type : 'string';
}
