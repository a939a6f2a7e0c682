/**
 * The shape of a JSON response, learned from the responses themselves (docs/drift.md, "What a
 * shape is"): every JSON path with the types seen there, how often it was there, and, for the
 * enum-like fields alone, the values seen. Arrays are summarised by their items (`data[]`), so a
 * list of forty providers and a list of two have the same shape. Free text, identifiers,
 * timestamps and counts are kept as types only: their values are never drift.
 */

/** A JSON value's type as a shape records it: numbers are one type, integer or not. */
export type JsonType = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';

/** What is known of one JSON path. */
export interface PathShape {
  /** The types seen at this path, sorted. */
  types: JsonType[];
  /** How many times a value (null included) was at this path. */
  count: number;
  /** How many of those values were objects (the denominator of their fields' presence). */
  objects: number;
  /** The values seen, for an enum-like field only; at most `LIMITS.valuesPerPath`. */
  values?: string[];
}

/** The learned shape of one operation's responses. */
export interface Shape {
  /** How many responses the shape was learned from. */
  responses: number;
  /** JSON paths: `(root)`, `meta.session_status`, `data[].type`; at most `LIMITS.paths`. */
  paths: Record<string, PathShape>;
  /** Response header names seen (lower case), with how often; at most `LIMITS.headers`. */
  headers: Record<string, number>;
  /** `Content-Type` values seen, without parameters. */
  contentTypes: string[];
  /** The smallest and largest body seen, in bytes. */
  size: { min: number; max: number };
  /** True once a bound dropped something: the shape is then a lower bound of what was seen. */
  truncated: boolean;
}

/** One response as the shape learner reads it. */
export interface ObservedResponse {
  body: unknown;
  /** Response headers, names in any case. */
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Body length in bytes. */
  bytes: number;
}

/** Bounds that keep a shape (and so the baseline file) small whatever the partner sends. */
export const LIMITS = {
  paths: 400,
  valuesPerPath: 32,
  valueLength: 64,
  headers: 64,
  depth: 12,
} as const;

/**
 * The fields whose values are an enumeration, by key name: the spec's `qualify_status`,
 * `session_status` and `request_status`, the provider `type`, and `ownership`. Every other string
 * is free text or an identifier, whose values are nobody's contract.
 */
export const ENUM_KEYS: ReadonlySet<string> = new Set([
  'qualify_status',
  'session_status',
  'request_status',
  'type',
  'ownership',
]);

/**
 * Headers that say how this one message travelled, not what the API promises: framing, the
 * connection, caches and proxies on the way. They come and go with the body's size or the path,
 * so they are not recorded.
 */
export const TRANSPORT_HEADERS: ReadonlySet<string> = new Set([
  'age',
  'connection',
  'content-length',
  'date',
  'etag',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'via',
]);

/** An empty shape, learned from no response. */
export function emptyShape(): Shape {
  return {
    responses: 0,
    paths: {},
    headers: {},
    contentTypes: [],
    size: { min: Number.POSITIVE_INFINITY, max: 0 },
    truncated: false,
  };
}

/** The shape of a single response. */
export function shapeOf(response: ObservedResponse): Shape {
  const shape = emptyShape();
  learn(shape, response);
  return shape;
}

/** Adds one response to `shape`, in place. */
export function learn(shape: Shape, response: ObservedResponse): void {
  shape.responses += 1;
  shape.size.min = Math.min(shape.size.min, response.bytes);
  shape.size.max = Math.max(shape.size.max, response.bytes);
  learnHeaders(shape, response.headers);
  if (response.body !== undefined) walk(shape, response.body, '(root)', null, 0);
}

/** The JSON type of a value. */
export function jsonType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  if (type === 'string' || type === 'number' || type === 'boolean') return type;
  return 'object';
}

function walk(shape: Shape, value: unknown, path: string, key: string | null, depth: number) {
  const at = pathShape(shape, path);
  if (at === undefined) return;
  const type = jsonType(value);
  at.count += 1;
  if (!at.types.includes(type)) at.types = [...at.types, type].sort();
  if (type === 'string' && key !== null && ENUM_KEYS.has(key)) addValue(shape, at, value as string);
  if (depth >= LIMITS.depth) return;
  if (type === 'array') {
    for (const item of value as unknown[]) walk(shape, item, `${path}[]`, key, depth + 1);
  } else if (type === 'object') {
    at.objects += 1;
    for (const [field, child] of Object.entries(value as Record<string, unknown>)) {
      walk(shape, child, childPath(path, field), field, depth + 1);
    }
  }
}

/** The path of `field` inside the object at `path`. */
export function childPath(path: string, field: string): string {
  return path === '(root)' ? field : `${path}.${field}`;
}

/** The path of the object a path's value sits in, or null for the root and for array items. */
export function parentPath(path: string): string | null {
  if (path === '(root)' || path.endsWith('[]')) return null;
  const dot = path.lastIndexOf('.');
  return dot === -1 ? '(root)' : path.slice(0, dot);
}

function pathShape(shape: Shape, path: string): PathShape | undefined {
  const known = shape.paths[path];
  if (known !== undefined) return known;
  if (Object.keys(shape.paths).length >= LIMITS.paths) {
    shape.truncated = true;
    return undefined;
  }
  const created: PathShape = { types: [], count: 0, objects: 0 };
  shape.paths[path] = created;
  return created;
}

function addValue(shape: Shape, at: PathShape, value: string): void {
  const bounded = value.slice(0, LIMITS.valueLength);
  const values = at.values ?? [];
  if (values.includes(bounded)) return;
  if (values.length >= LIMITS.valuesPerPath) {
    shape.truncated = true;
    return;
  }
  at.values = [...values, bounded].sort();
}

function learnHeaders(shape: Shape, headers: ObservedResponse['headers']): void {
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (TRANSPORT_HEADERS.has(lower)) continue;
    if (lower in shape.headers) shape.headers[lower] = (shape.headers[lower] ?? 0) + 1;
    else if (Object.keys(shape.headers).length < LIMITS.headers) shape.headers[lower] = 1;
    else shape.truncated = true;
    if (lower === 'content-type') addContentType(shape, Array.isArray(value) ? value[0] : value);
  }
}

function addContentType(shape: Shape, value: string | undefined): void {
  const mediaType = (value ?? '').split(';')[0]?.trim().toLowerCase().slice(0, LIMITS.valueLength);
  if (!mediaType || shape.contentTypes.includes(mediaType)) return;
  if (shape.contentTypes.length >= LIMITS.valuesPerPath) shape.truncated = true;
  else shape.contentTypes = [...shape.contentTypes, mediaType].sort();
}

/** `into` learns everything `from` saw, in place: a baseline widened by an accepted shape. */
export function merge(into: Shape, from: Shape): void {
  into.responses += from.responses;
  into.size.min = Math.min(into.size.min, from.size.min);
  into.size.max = Math.max(into.size.max, from.size.max);
  into.truncated ||= from.truncated;
  for (const [name, count] of Object.entries(from.headers)) {
    if (name in into.headers || Object.keys(into.headers).length < LIMITS.headers) {
      into.headers[name] = (into.headers[name] ?? 0) + count;
    } else into.truncated = true;
  }
  for (const type of from.contentTypes) addContentType(into, type);
  for (const [path, seen] of Object.entries(from.paths)) mergePath(into, path, seen);
}

function mergePath(into: Shape, path: string, seen: PathShape): void {
  const at = pathShape(into, path);
  if (at === undefined) return;
  at.count += seen.count;
  at.objects += seen.objects;
  at.types = [...new Set([...at.types, ...seen.types])].sort();
  for (const value of seen.values ?? []) addValue(into, at, value);
}
