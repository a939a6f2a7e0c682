/**
 * The configuration file as a zod schema: defaults, strict mappings at every level, and every
 * rule that spans several keys. Rules spanning keys run even when other keys of the same mapping
 * failed (zod's `when`), so one pass reports every problem; each such rule reads only the keys it
 * needs and only when they parsed.
 *
 * Built per load because the API-key rule reads the process environment and files of that load.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { AnyCheck } from '../kernel/check.js';
import { formatDuration } from './duration.js';
import { maintenanceSchema } from './maintenance.js';
import { defaultApiKeyEnv } from './env.js';
import { describeValue } from './problems.js';
import {
  WHEN_MAPPING,
  asLoose,
  greaterThan,
  isRecord,
  positiveDuration,
  shorterThan,
  timerInterval,
  type Issues,
  type Loose,
} from './rules.js';
import { ENV_VAR_NAME_PATTERN, resolveApiKey, type ApiKeySource } from './secrets.js';
import { readCertificateAuthorities } from './trust.js';
import {
  egressShape,
  resolveClientCertificate,
  resolveProxy,
  type ResolvedClientCertificate,
  type ResolvedProxy,
} from './egress.js';

export const ENVIRONMENT_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** The API's global limit is 100 requests per second per client IP; a budget above it is moot. */
export const MAX_REQUEST_BUDGET_PER_SECOND = 100;

/** Every default of the file outside the checks' sections, in the file's own units and spelling. */
export const DEFAULTS = {
  listen: { host: '0.0.0.0', port: 9464 },
  stateFile: '.isa-monitor/sessions.json',
  logLevel: 'info',
  shutdownTimeout: '10s',
  history: { window: '24h', runs: 100 },
  thresholds: { expected: '100ms', warning: '500ms', critical: '1000ms' },
  requestBudgetPerSecond: 1,
  control: { interval: '30s', timeout: '5s' },
} as const;

/** `location`: a label value that names a place, e.g. `eu-west` or `office_berlin`. */
export const LOCATION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export interface SchemaContext {
  /** The checks of this build, from the composition root: one section each (docs/architecture.md). */
  checks: readonly AnyCheck[];
  env: NodeJS.ProcessEnv;
  /** Relative `api_key_file` and `ca_file` paths resolve against this (the config file's directory). */
  baseDir: string;
  readFile: (path: string) => string;
  /** Wall clock (ms since the epoch) for the client certificate's expiry; `Date.now`. */
  now?: () => number;
}

/** The certificate authorities of an environment's `ca_file`, read while it loads. */
export interface ResolvedTrust {
  /** Absolute path of the file. */
  path: string;
  /** Its PEM certificates, one block each. */
  certificates: string[];
}

/** A resolved API key, kept beside the parsed environment it belongs to. */
export interface ResolvedSecret {
  apiKey: string | null;
  source: ApiKeySource | null;
}

/**
 * `control.url`: a neutral http(s) URL, probed with a plain GET that never carries the API key;
 * credentials in it are refused like in `base_url` (the URL is never quoted).
 */
const controlUrlSchema = z.string().refine(
  (text) => {
    try {
      const url = new URL(text);
      return (
        (url.protocol === 'http:' || url.protocol === 'https:') &&
        url.username === '' &&
        url.password === ''
      );
    } catch {
      return false;
    }
  },
  { error: 'must be an http:// or https:// URL without a user name or password' },
);

/** `control`: the per-location probe of a neutral URL; off when absent. */
const controlSchema = z
  .strictObject({
    url: controlUrlSchema,
    interval: timerInterval().prefault(DEFAULTS.control.interval),
    timeout: positiveDuration().prefault(DEFAULTS.control.timeout),
  })
  .superRefine((value, issues) => {
    shorterThan(value as Loose, issues, 'timeout', 'interval', 'control');
  }, WHEN_MAPPING);

const baseUrlSchema = z.string().transform((text, ctx) => {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  // The URL itself is never quoted: a user name or password in it would be a secret.
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    ctx.addIssue({ code: 'custom', message: 'must be an http:// or https:// URL' });
    return z.NEVER;
  }
  const problems: string[] = [];
  if (url.username !== '' || url.password !== '') {
    problems.push(
      'must not contain a user name or password: give the API key with api_key_env or api_key_file',
    );
  }
  if (text.includes('?') || text.includes('#')) {
    problems.push('must not contain a query string or fragment');
  }
  for (const message of problems) ctx.addIssue({ code: 'custom', message });
  if (problems.length > 0) return z.NEVER;
  // One spelling without a trailing slash, so request paths join as `${baseUrl}/ping`.
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
});

const portSchema = z
  .number({ error: (issue) => portMessage(issue.input) })
  .int({ error: (issue) => portMessage(issue.input) })
  .min(0, { error: (issue) => portMessage(issue.input) })
  .max(65535, { error: (issue) => portMessage(issue.input) });

function portMessage(input: unknown): string {
  return `must be an integer from 0 to 65535 (got ${describeValue(input)})`;
}

const thresholdsSchema = z
  .strictObject({
    expected: positiveDuration().prefault(DEFAULTS.thresholds.expected),
    warning: positiveDuration().prefault(DEFAULTS.thresholds.warning),
    critical: positiveDuration().prefault(DEFAULTS.thresholds.critical),
  })
  .superRefine((value, ctx) => {
    const v = value as Loose;
    greaterThan(v, ctx, 'warning', 'expected', 'thresholds');
    greaterThan(v, ctx, 'critical', 'warning', 'thresholds');
  }, WHEN_MAPPING);

/**
 * The configuration schema for one load, and the side tables where the API-key rule leaves each
 * environment's resolved key (keyed by the parsed environment object, which is what the parse
 * returns), so the key is read once and only ever held in the result, and the `ca_file` rule its
 * certificates, so the file is read once.
 */
export function buildConfigSchema(ctx: SchemaContext) {
  const resolved: ResolvedTables = {
    secrets: new WeakMap<object, ResolvedSecret>(),
    trust: new WeakMap<object, ResolvedTrust>(),
    proxies: new WeakMap<object, ResolvedProxy>(),
    clientCertificates: new WeakMap<object, ResolvedClientCertificate>(),
  };
  const environmentSchema = environmentSchemaFor(ctx, resolved);

  const schema = z.strictObject({
    location: z
      .string({ error: (issue) => `must be a string (got ${describeValue(issue.input)})` })
      .regex(LOCATION_PATTERN, {
        error: (issue) =>
          `must start with a letter or digit and contain only letters, digits, "_", "." and "-", at most 64 characters (got ${describeValue(issue.input)})`,
      })
      .optional(),
    control: controlSchema.optional(),
    listen: z
      .strictObject({
        host: z.string().min(1).default(DEFAULTS.listen.host),
        port: portSchema.default(DEFAULTS.listen.port),
      })
      .prefault({}),
    state_file: z.string().min(1).optional(),
    log: z.strictObject({ level: z.enum(LOG_LEVELS).default(DEFAULTS.logLevel) }).prefault({}),
    shutdown_timeout: positiveDuration().prefault(DEFAULTS.shutdownTimeout),
    history: z
      .strictObject({
        window: positiveDuration().prefault(DEFAULTS.history.window),
        runs: z.number().int().min(1).max(1000).default(DEFAULTS.history.runs),
      })
      .prefault({}),
    environments: z
      .array(environmentSchema, {
        error: (issue) =>
          issue.input === undefined ? 'is required: list at least one environment' : undefined,
      })
      .min(1, { error: 'must list at least one environment' })
      .superRefine(
        (list, issues) => {
          const seen = new Set<string>();
          (list as unknown[]).forEach((item, i) => {
            const name = isRecord(item) ? item['name'] : undefined;
            if (typeof name !== 'string') return;
            if (seen.has(name)) {
              issues.addIssue({
                code: 'custom',
                path: [i, 'name'],
                message: `duplicate environment name ${describeValue(name)}`,
              });
            }
            seen.add(name);
          });
        },
        { when: (payload) => Array.isArray(payload.value) },
      ),
  });

  return { schema, ...resolved };
}

/** The side tables the environment rules fill, keyed by the parsed environment object. */
interface ResolvedTables {
  secrets: WeakMap<object, ResolvedSecret>;
  trust: WeakMap<object, ResolvedTrust>;
  proxies: WeakMap<object, ResolvedProxy>;
  clientCertificates: WeakMap<object, ResolvedClientCertificate>;
}

/** One environment's schema: its keys, one section per check, and the rules that read files. */
function environmentSchemaFor(ctx: SchemaContext, resolved: ResolvedTables) {
  const { secrets, trust, proxies, clientCertificates } = resolved;
  const files = { ...ctx, now: ctx.now ?? Date.now };
  // One section per check, under its name, defaulting to an empty mapping.
  const checkSectionsShape = Object.fromEntries(
    ctx.checks.map((check) => [check.name, check.config.schema.prefault({})]),
  );

  return z
    .strictObject({
      name: z.string().regex(ENVIRONMENT_NAME_PATTERN, {
        error: (issue) =>
          `must start with a lowercase letter and contain only lowercase letters, digits, "_" and "-", at most 32 characters (got ${describeValue(issue.input)})`,
      }),
      base_url: baseUrlSchema,
      api_key_env: z
        .string()
        .regex(ENV_VAR_NAME_PATTERN, {
          error:
            'must be the name of an environment variable (upper-case letters, digits and "_"), not the key itself',
        })
        .optional(),
      api_key_file: z.string().min(1).optional(),
      ca_file: z.string().min(1).optional(),
      ...egressShape,
      thresholds: thresholdsSchema.prefault({}),
      request_budget_per_second: z
        .number()
        .positive()
        .max(MAX_REQUEST_BUDGET_PER_SECOND, {
          error: (issue) =>
            `must be at most ${MAX_REQUEST_BUDGET_PER_SECOND}, the API's rate limit per client IP (got ${describeValue(issue.input)})`,
        })
        .default(DEFAULTS.requestBudgetPerSecond),
      maintenance: maintenanceSchema,
      ...checkSectionsShape,
    })
    .superRefine((value, issues) => {
      const v = value as Loose;
      checkBudget(v, issues, ctx.checks);
      const secret = resolveSecret(v, issues, ctx);
      if (secret) secrets.set(value, secret);
      const authorities = resolveTrust(v, issues, ctx);
      if (authorities) trust.set(value, authorities);
      const proxy = resolveProxy(v, issues, files);
      if (proxy) proxies.set(value, proxy);
      const certificate = resolveClientCertificate(v, issues, files);
      if (certificate) clientCertificates.set(value, certificate);
    }, WHEN_MAPPING);
}

export type ConfigDocument = z.output<ReturnType<typeof buildConfigSchema>['schema']>;

/**
 * The request budget must let the most frequent request of every enabled check go out on schedule
 * (e.g. one ping per ping interval, one poll per lifecycle poll interval).
 */
function checkBudget(v: Loose, issues: Issues, checks: readonly AnyCheck[]): void {
  const budget = v['request_budget_per_second'];
  if (typeof budget !== 'number' || !(budget > 0)) return;
  const gaps = checks.flatMap((check) => check.config.requestGaps(asLoose(v[check.name])));
  const tightest = gaps.sort((a, b) => a.ms - b.ms)[0];
  if (!tightest || tightest.ms === 0 || budget * tightest.ms >= 1000 - 1e-9) return;
  const needed = Math.ceil((1000 / tightest.ms) * 1000) / 1000;
  issues.addIssue({
    code: 'custom',
    path: ['request_budget_per_second'],
    message: `must allow one request per ${tightest.key} (${formatDuration(tightest.ms)}): at least ${needed}, got ${budget}`,
  });
}

/** Exactly one key source; the default variable when none is named. Reads it, reports problems. */
function resolveSecret(v: Loose, issues: Issues, ctx: SchemaContext): ResolvedSecret | undefined {
  const keyEnv = v['api_key_env'];
  const keyFile = v['api_key_file'];
  if (keyEnv !== undefined && keyFile !== undefined) {
    issues.addIssue({ code: 'custom', message: 'set only one of api_key_env and api_key_file' });
    return undefined;
  }
  let source: ApiKeySource;
  let key: 'api_key_env' | 'api_key_file';
  if (keyFile !== undefined) {
    if (typeof keyFile !== 'string' || keyFile === '') return undefined;
    source = { kind: 'file', path: resolve(ctx.baseDir, keyFile) };
    key = 'api_key_file';
  } else if (keyEnv !== undefined) {
    if (typeof keyEnv !== 'string' || !ENV_VAR_NAME_PATTERN.test(keyEnv)) return undefined;
    source = { kind: 'env', name: keyEnv };
    key = 'api_key_env';
  } else {
    const name = v['name'];
    // Without a valid name there is no default variable; the name's own problem is reported.
    if (typeof name !== 'string' || !ENVIRONMENT_NAME_PATTERN.test(name)) return undefined;
    source = { kind: 'env', name: defaultApiKeyEnv(name) };
    key = 'api_key_env';
    if (ctx.env[source.name] === undefined) {
      // No source named and the default variable unset: fine where no enabled check sends an API
      // request (e.g. only the tls check); otherwise say which checks need the key.
      const users = checksUsingTheKey(v, ctx.checks);
      if (users.length === 0) return { apiKey: null, source: null };
      const resolution = resolveApiKey(source, ctx.env, ctx.readFile);
      const message = resolution.ok ? '' : resolution.message;
      issues.addIssue({
        code: 'custom',
        path: [key],
        message:
          users.length === 1
            ? `${message}; the enabled check ${listNames(users)} sends API requests`
            : `${message}; the enabled checks ${listNames(users)} send API requests`,
      });
      return undefined;
    }
  }
  const resolution = resolveApiKey(source, ctx.env, ctx.readFile);
  if (!resolution.ok) {
    issues.addIssue({ code: 'custom', path: [key], message: resolution.message });
    return undefined;
  }
  return { apiKey: resolution.apiKey, source };
}

/**
 * The checks enabled in this environment that send API requests (`usesApiKey` not false), with
 * each section's enabled default where the file leaves it out (which may depend on the base URL).
 */
function checksUsingTheKey(v: Loose, checks: readonly AnyCheck[]): string[] {
  const baseUrl = typeof v['base_url'] === 'string' ? v['base_url'] : '';
  return checks
    .filter((check) => check.usesApiKey !== false)
    .filter((check) => {
      const enabled = asLoose(v[check.name])['enabled'];
      if (typeof enabled === 'boolean') return enabled;
      const fallback = check.config.defaults.enabled;
      return typeof fallback === 'boolean' ? fallback : fallback({ baseUrl });
    })
    .map((check) => check.name);
}

/** `a`, `a and b`, `a, b and c`. */
function listNames(names: readonly string[]): string {
  return names.length < 2
    ? names.join('')
    : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** Reads `ca_file` when set (and a string: other values have their own problem). */
function resolveTrust(v: Loose, issues: Issues, ctx: SchemaContext): ResolvedTrust | undefined {
  const caFile = v['ca_file'];
  if (typeof caFile !== 'string' || caFile === '') return undefined;
  const path = resolve(ctx.baseDir, caFile);
  const resolution = readCertificateAuthorities(path, ctx.readFile);
  if (!resolution.ok) {
    issues.addIssue({ code: 'custom', path: ['ca_file'], message: resolution.message });
    return undefined;
  }
  return { path, certificates: resolution.certificates };
}
