/**
 * One example of a difference: the value at its path in the response that showed it, bounded
 * and redacted. Tokens, keys and credentials are never kept, whatever the field is called in a
 * future version of the API: a field whose name says token, key, secret, password or
 * authorization is replaced before the example is written (docs/drift.md, "Examples").
 */
import type { ObservedResponse } from './shape.js';

/** The longest example kept, in characters. */
export const EXAMPLE_LENGTH = 200;

const SECRET_NAME = /token|key|secret|password|passwd|authori[sz]ation|cookie|credential/i;
const REDACTED = '[redacted]';
const STRING_LENGTH = 64;

/** The example for a path (`data[].type`, `header:retry-after`, `(size)`) of a response. */
export function exampleAt(
  response: ObservedResponse,
  path: string,
  redact: (text: string) => string = (text) => text,
): string {
  if (path === '(size)') return `${response.bytes} bytes`;
  if (path.startsWith('header:')) return headerExample(response, path.slice('header:'.length));
  const field = path.split('.').at(-1)?.replace(/\[\]$/, '') ?? '';
  if (SECRET_NAME.test(field)) return JSON.stringify(REDACTED);
  const value = valueAt(response.body, path);
  return bound(redact(JSON.stringify(value === undefined ? null : value, redactor) ?? 'null'));
}

function headerExample(response: ObservedResponse, name: string): string {
  if (SECRET_NAME.test(name)) return REDACTED;
  const entry = Object.entries(response.headers).find(([key]) => key.toLowerCase() === name);
  const value = entry?.[1];
  if (value === undefined) return '(absent)';
  return bound(Array.isArray(value) ? value.join(', ') : String(value));
}

/** The first value at a shape's path: `[]` steps into the first item that has the rest. */
export function valueAt(body: unknown, path: string): unknown {
  if (path === '(root)') return body;
  // Items of a body that is itself an array are at `(root)[]`.
  return walk(body, path.replace(/^\(root\)/, '').split('.'));
}

function walk(value: unknown, steps: readonly string[]): unknown {
  if (steps.length === 0) return value;
  const [step = '', ...rest] = steps;
  const items = step.endsWith('[]');
  const field = items ? step.slice(0, -2) : step;
  const inner = field === '' ? value : fieldOf(value, field);
  if (!items) return walk(inner, rest);
  if (!Array.isArray(inner)) return undefined;
  for (const item of inner) {
    const found = walk(item, rest);
    if (found !== undefined) return found;
  }
  return undefined;
}

function fieldOf(value: unknown, field: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return (value as Record<string, unknown>)[field];
}

function redactor(key: string, value: unknown): unknown {
  if (key !== '' && SECRET_NAME.test(key)) return REDACTED;
  if (typeof value === 'string' && value.length > STRING_LENGTH) {
    return `${value.slice(0, STRING_LENGTH)}…`;
  }
  return value;
}

function bound(text: string): string {
  return text.length > EXAMPLE_LENGTH ? `${text.slice(0, EXAMPLE_LENGTH - 1)}…` : text;
}
