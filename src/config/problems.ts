/**
 * Turning zod issues into configuration problems: one `{ path, message }` per problem, with paths
 * written the way a user reads the YAML (`environments[0].ping.interval`) and messages that say
 * what is allowed. The messages are part of the interface (pinned by table tests), so every
 * message is produced here or next to the rule that checks it, never taken from zod's defaults.
 */
import { z } from 'zod';

/** One problem with a configuration: where (key path, variable name or file position) and what. */
export interface ConfigProblem {
  path: string;
  message: string;
}

/** Keys whose values may be mistaken secrets: messages about them never quote the value. */
const SECRET_ADJACENT_KEYS = new Set(['api_key_env', 'api_key_file']);

/**
 * Keys (compared without case and separators) that can only mean a secret written into the file.
 * They are unknown keys like any other, but their message points at the supported sources and
 * never suggests a spelling that would make the secret acceptable.
 */
const LITERAL_SECRET_KEYS = new Set([
  'apikey',
  'apitoken',
  'apisecret',
  'token',
  'secret',
  'password',
  'bearertoken',
]);

export const LITERAL_SECRET_MESSAGE =
  'API keys are not read from the config file: use api_key_env (the name of an environment variable) or api_key_file (the path of a file)';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `['environments', 0, 'ping']` → `environments[0].ping`; the empty path is `(root)`. */
export function formatKeyPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const key = String(segment);
      if (IDENTIFIER.test(key)) out += out === '' ? key : `.${key}`;
      else out += `[${JSON.stringify(key)}]`;
    }
  }
  return out === '' ? '(root)' : out;
}

/** How a value reads in a message: strings quoted (and shortened), containers by kind. */
export function describeValue(value: unknown): string {
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  }
  if (typeof value === 'object') return 'a mapping';
  return String(value);
}

const EXPECTED_TEXT: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'a mapping',
  array: 'a list',
};

/**
 * The parse-level zod error map: messages for the generic issue kinds. Schema-level messages
 * (set where a rule is declared) take precedence over this, as zod applies the most specific one.
 */
export const configErrorMap: z.core.$ZodErrorMap = (issue) => {
  const last = issue.path?.[issue.path.length - 1];
  const quiet = typeof last === 'string' && SECRET_ADJACENT_KEYS.has(last);
  const got = quiet ? '' : ` (got ${describeValue(issue.input)})`;
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) return 'is required';
      if (last === 'zip' && typeof issue.input === 'number') {
        return 'must be a quoted string such as "80202": YAML reads unquoted digits as a number and drops leading zeros';
      }
      return `must be ${EXPECTED_TEXT[issue.expected] ?? issue.expected}${got}`;
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string') {
        return min <= 1 ? 'must not be empty' : `must be at least ${min} characters`;
      }
      if (issue.origin === 'array') return `must list at least ${min}`;
      return issue.inclusive
        ? `must be at least ${min}${got}`
        : `must be greater than ${min}${got}`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return `must be at most ${max} characters`;
      return issue.inclusive ? `must be at most ${max}${got}` : `must be less than ${max}${got}`;
    }
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')}${got}`;
    case 'invalid_format':
      return `has an invalid format${got}`;
    default:
      return 'is invalid';
  }
};

/**
 * Converts the issues of a failed parse into problems. An `unrecognized_keys` issue becomes one
 * problem per key, with a suggestion when the key looks like a misspelling of a known one; a
 * literal API key gets its own message (without its value).
 */
export function problemsFromIssues(
  issues: readonly z.core.$ZodIssue[],
  root: z.ZodType,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') {
      problems.push({ path: formatKeyPath(issue.path), message: issue.message });
      continue;
    }
    const known = knownKeysAt(root, issue.path);
    for (const key of issue.keys) {
      const path = formatKeyPath([...issue.path, key]);
      if (isLiteralSecretKey(key)) {
        problems.push({ path, message: LITERAL_SECRET_MESSAGE });
        continue;
      }
      const suggestion = suggestKey(key, known);
      problems.push({
        path,
        message: suggestion ? `unknown key (did you mean "${suggestion}"?)` : 'unknown key',
      });
    }
  }
  return problems;
}

/** `<path>: <message>`, one line per problem. */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  return problems.map((p) => `${p.path}: ${p.message}`).join('\n');
}

function isLiteralSecretKey(key: string): boolean {
  return LITERAL_SECRET_KEYS.has(normalizeKey(key));
}

function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[-_\s]/g, '');
}

/** The closest known key: same letters ignoring case and separators, or at most two edits away. */
export function suggestKey(key: string, known: readonly string[]): string | undefined {
  const normal = normalizeKey(key);
  const same = known.find((k) => normalizeKey(k) === normal);
  if (same) return same;
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(normal, normalizeKey(candidate));
    if (distance <= 2 && (!best || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The keys an object schema accepts at `path` of `root`, through arrays and wrappers. */
function knownKeysAt(root: z.ZodType, path: readonly PropertyKey[]): string[] {
  let schema: z.ZodType | undefined = unwrapSchema(root);
  for (const segment of path) {
    if (schema instanceof z.ZodArray) schema = unwrapSchema(schema.element as z.ZodType);
    else if (schema instanceof z.ZodObject) {
      const child: z.ZodType | undefined = (schema.shape as Record<string, z.ZodType>)[
        String(segment)
      ];
      schema = child ? unwrapSchema(child) : undefined;
    } else return [];
  }
  return schema instanceof z.ZodObject ? Object.keys(schema.shape as object) : [];
}

/** The schema inside optional, default, prefault, nullable and pipe (its input side) wrappers. */
export function unwrapSchema(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (;;) {
    if (
      current instanceof z.ZodOptional ||
      current instanceof z.ZodDefault ||
      current instanceof z.ZodPrefault ||
      current instanceof z.ZodNullable
    ) {
      current = current.unwrap() as z.ZodType;
    } else if (current instanceof z.ZodPipe) {
      current = current.in as z.ZodType;
    } else return current;
  }
}
