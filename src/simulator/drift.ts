/**
 * Contract drift faults (docs/simulator.md, "Drift faults"): the API changes under its clients
 * without breaking at once. A `drift` fault rewrites the JSON body an endpoint was about to send,
 * after the body passed its schema: a field added, an optional field dropped, a value of an
 * enum-like field the spec does not have, null where there never was one, another type, or a
 * response many times its size. Paths are written as the drift model writes them (docs/drift.md,
 * "What a shape is"): `meta.session_status`, `data[].type`, `(root)`.
 */
import { z } from 'zod';

/** What a `drift` fault changes. */
export const DRIFT_CHANGES = [
  'add_field',
  'drop_field',
  'new_value',
  'null_field',
  'change_type',
  'grow',
] as const;
export type DriftChange = (typeof DRIFT_CHANGES)[number];

const ROOT = '(root)';
const SEGMENT = '[A-Za-z0-9_-]+(\\[\\])?';
const PATH_PATTERN = new RegExp(`^(\\(root\\)|${SEGMENT}(\\.${SEGMENT})*)$`);

/** The field `add_field` adds when the fault names none. */
export const DEFAULT_ADDED_FIELD = 'migration_notice';
/** How many times `grow` repeats when the fault says nothing. */
export const DEFAULT_GROWTH = 10;

/** The changes that need a `path` to know what to change. */
const NEEDS_PATH: ReadonlySet<DriftChange> = new Set([
  'drop_field',
  'new_value',
  'null_field',
  'change_type',
]);

/** One `drift` fault, as JSON in the header, the admin API and the timeline. */
export const driftFaultSchema = z
  .strictObject({
    kind: z.literal('drift'),
    change: z.enum(DRIFT_CHANGES),
    path: z
      .string()
      .max(200)
      .regex(PATH_PATTERN, 'must be a path such as meta.session_status, data[].type or (root)')
      .optional(),
    field: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a field name (letters, digits, _ -)')
      .optional(),
    value: z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]).optional(),
    factor: z.number().int().min(2).max(100).optional(),
  })
  .superRefine((fault, issues) => {
    if (NEEDS_PATH.has(fault.change) && fault.path === undefined) {
      issues.addIssue({ code: 'custom', path: ['path'], message: `${fault.change} needs a path` });
    }
    if (fault.change === 'new_value' && typeof fault.value !== 'string') {
      issues.addIssue({
        code: 'custom',
        path: ['value'],
        message: 'new_value needs a string value',
      });
    }
    if (fault.field !== undefined && fault.change !== 'add_field') {
      issues.addIssue({ code: 'custom', path: ['field'], message: 'only add_field takes a field' });
    }
    if (fault.factor !== undefined && fault.change !== 'grow') {
      issues.addIssue({ code: 'custom', path: ['factor'], message: 'only grow takes a factor' });
    }
  });
export type DriftFault = z.infer<typeof driftFaultSchema>;

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type Container = Record<string, Json> | Json[];

/** A place in a body: the object or array holding a value, and its key there. */
interface Slot {
  container: Container;
  key: string | number;
}

function valueAt(slot: Slot): Json | undefined {
  return (slot.container as Record<string | number, Json>)[slot.key];
}

function isObject(value: Json | undefined): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Every slot a path names in `holder` (which holds the body under `(root)`): a segment steps into
 * a field, `[]` after it into each item of the array there. Missing fields name no slot.
 */
function slotsAt(holder: Record<string, Json>, path: string): Slot[] {
  let slots: Slot[] = [{ container: holder, key: ROOT }];
  if (path === ROOT) return slots;
  for (const segment of path.split('.')) {
    const each = segment.endsWith('[]');
    const name = each ? segment.slice(0, -2) : segment;
    slots = slots.flatMap((slot) => {
      const value = valueAt(slot);
      return isObject(value) && name in value ? [{ container: value, key: name }] : [];
    });
    if (each) {
      slots = slots.flatMap((slot) => {
        const value = valueAt(slot);
        return Array.isArray(value)
          ? value.map((_, index) => ({ container: value, key: index }))
          : [];
      });
    }
  }
  return slots;
}

/** The first field of the body that holds a non-empty array: what `grow` repeats by default. */
function firstListPath(body: Json): string | null {
  if (!isObject(body)) return null;
  const found = Object.entries(body).find(([, value]) => Array.isArray(value) && value.length > 0);
  return found ? found[0] : null;
}

/** Another JSON type for a value, the way a partner's serializer change would give it. */
function retyped(value: Json): Json {
  if (typeof value === 'string') {
    const number = Number(value);
    return value.trim() !== '' && Number.isFinite(number) ? number : value.length;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Changes one slot in place; false when the change does nothing there. */
function changeSlot(slot: Slot, fault: DriftFault): boolean {
  const value = valueAt(slot);
  const set = (next: Json): void => {
    (slot.container as Record<string | number, Json>)[slot.key] = next;
  };
  switch (fault.change) {
    case 'add_field':
      if (!isObject(value)) return false;
      value[fault.field ?? DEFAULT_ADDED_FIELD] = fault.value ?? 'this response will change';
      return true;
    case 'drop_field':
      if (Array.isArray(slot.container)) return false;
      return delete slot.container[slot.key as string];
    case 'new_value':
      if (typeof value !== 'string' || value === fault.value) return false;
      set(fault.value as string);
      return true;
    case 'null_field':
      if (value === null) return false;
      set(null);
      return true;
    case 'change_type':
      if (value === null || value === undefined) return false;
      set(fault.value !== undefined ? fault.value : retyped(value));
      return true;
    case 'grow':
      return grow(slot, value, fault.factor ?? DEFAULT_GROWTH);
  }
}

/** Repeats a list's items, or a text, `factor` times: the same shape, many times the size. */
function grow(slot: Slot, value: Json | undefined, factor: number): boolean {
  const container = slot.container as Record<string | number, Json>;
  if (Array.isArray(value) && value.length > 0) {
    container[slot.key] = Array.from({ length: factor }, () => value).flat();
    return true;
  }
  if (typeof value === 'string' && value.length > 0) {
    container[slot.key] = value.repeat(factor);
    return true;
  }
  return false;
}

/**
 * The body `fault` makes of `body`, or undefined when it changes nothing in it (no such path,
 * the value already so): such a body leaves a counted fault unused. `body` itself is never
 * changed. Only `add_field` works on the whole body (`(root)`); the rest need a field.
 */
export function applyDrift(body: unknown, fault: DriftFault): unknown {
  if (body === undefined) return undefined;
  const holder = { [ROOT]: JSON.parse(JSON.stringify(body)) as Json };
  const path = fault.path ?? (fault.change === 'grow' ? firstListPath(holder[ROOT]) : ROOT);
  if (path === null || (path === ROOT && fault.change !== 'add_field')) return undefined;
  let changed = false;
  for (const slot of slotsAt(holder, path)) changed = changeSlot(slot, fault) || changed;
  return changed ? holder[ROOT] : undefined;
}

/**
 * Applies every drift fault `take` hands out to `body`, in the order of the rules: `take` is the
 * request's lookup of behaviour faults, asked only with a fault that would change the body.
 */
export function driftedBody(
  body: unknown,
  take: (applies: (fault: DriftFault) => boolean) => DriftFault | null,
): unknown {
  let current = body;
  const taken = new Set<DriftFault>();
  for (;;) {
    let next: unknown;
    const fault = take((candidate) => {
      if (taken.has(candidate)) return false;
      next = applyDrift(current, candidate);
      return next !== undefined;
    });
    if (fault === null) return current;
    taken.add(fault);
    current = next;
  }
}
