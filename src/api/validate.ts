/**
 * Response validation for the `response_schema` contract check. A response can be wrong in two
 * ways that matter differently: a violation (a field the spec names is missing or of the wrong
 * type) and an unknown field (something the spec does not name). Unknown fields are harmless to a
 * client and reported apart, so an API that adds a field does not look broken.
 */
import { z } from 'zod';

export interface SchemaViolation {
  /** Dotted path to the field, e.g. `data.0.min_plan_price.amount_cents`; `(root)` for the body. */
  path: string;
  message: string;
}

export interface ResponseValidation<T> {
  ok: boolean;
  /** The parsed body when `ok`. */
  data: T | undefined;
  violations: SchemaViolation[];
  /** Paths of fields present in the body that the schema does not name. */
  unknownFields: string[];
}

/**
 * How response bodies are parsed: without zod's generated code. On the first parse of each object
 * schema zod otherwise compiles a parser for it with `new Function`, source text and code the
 * measurement worker then keeps; for bodies of a few fields, a minute apart, zod's ordinary path
 * costs no measurable CPU and the worker half a megabyte less (bench/LOG.md, "Memory").
 */
export const RESPONSE_PARSE = { jitless: true } as const;

/** Validates a decoded response body against a schema from `schemas.ts`. */
export function validateResponse<S extends z.ZodType>(
  schema: S,
  body: unknown,
): ResponseValidation<z.infer<S>> {
  const result = schema.safeParse(body, RESPONSE_PARSE);
  const unknownFields: string[] = [];
  collectUnknownFields(schema, body, [], unknownFields);
  if (result.success) {
    return { ok: true, data: result.data, violations: [], unknownFields };
  }
  return {
    ok: false,
    data: undefined,
    violations: result.error.issues.map((issue) => ({
      path: formatPath(issue.path),
      message: issue.message,
    })),
    unknownFields,
  };
}

export function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

function collectUnknownFields(
  schema: z.ZodType,
  value: unknown,
  path: PropertyKey[],
  out: string[],
): void {
  // Only objects (and arrays of them) can hold a field the spec does not name; most of a body's
  // values are strings and numbers, so they end the walk before any schema is looked at.
  if (typeof value !== 'object' || value === null) return;
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) {
    collectUnknownFields(schema.unwrap() as z.ZodType, value, path, out);
    return;
  }
  if (schema instanceof z.ZodUnion) {
    // Walk the first option the value fits, or the first option when none fits.
    const options = schema.options as readonly z.ZodType[];
    const fit = options.find((o) => o.safeParse(value, RESPONSE_PARSE).success) ?? options[0];
    if (fit) collectUnknownFields(fit, value, path, out);
    return;
  }
  if (schema instanceof z.ZodArray) {
    if (!Array.isArray(value)) return;
    value.forEach((item, i) =>
      collectUnknownFields(schema.element as z.ZodType, item, [...path, i], out),
    );
    return;
  }
  if (schema instanceof z.ZodObject) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
    const shape = schema.shape as Record<string, z.ZodType>;
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      const childSchema = shape[key];
      if (childSchema === undefined) out.push(formatPath([...path, key]));
      else collectUnknownFields(childSchema, child, [...path, key], out);
    }
  }
}
