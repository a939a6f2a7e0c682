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
import { addressCombination, sessionRequestSchema } from '../api/schemas.js';
import { formatDuration, parseDuration } from './duration.js';
import { defaultApiKeyEnv } from './env.js';
import { cronForInterval } from './interval.js';
import { describeValue } from './problems.js';
import { ENV_VAR_NAME_PATTERN, resolveApiKey, type ApiKeySource } from './secrets.js';

export const ENVIRONMENT_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const EXPECTATIONS = ['available', 'no_service', 'failed', 'any'] as const;
/** The API's global limit is 100 requests per second per client IP; a budget above it is moot. */
export const MAX_REQUEST_BUDGET_PER_SECOND = 100;

/** Every default of the file, in the file's own units and spelling. */
export const DEFAULTS = {
  listen: { host: '0.0.0.0', port: 9464 },
  stateFile: '.isa-monitor/sessions.json',
  logLevel: 'info',
  shutdownTimeout: '10s',
  thresholds: { expected: '100ms', warning: '500ms', critical: '1000ms' },
  requestBudgetPerSecond: 1,
  ping: { enabled: true, interval: '60s', timeout: '10s' },
  lifecycle: {
    enabled: true,
    interval: '5m',
    timeout: '120s',
    pollInterval: '2s',
    pollTimeout: '90s',
    campaignId: 'isa-monitor-synthetic',
  },
  expect: 'available',
} as const;

export interface SchemaContext {
  env: NodeJS.ProcessEnv;
  /** Relative `api_key_file` paths resolve against this (the config file's directory). */
  baseDir: string;
  readFile: (path: string) => string;
}

/** A resolved API key, kept beside the parsed environment it belongs to. */
export interface ResolvedSecret {
  apiKey: string;
  source: ApiKeySource;
}

const DURATION_HINT = 'must be a duration such as "1500ms", "60s", "5m" or "1h"';
const CRON_HINT =
  'cannot be scheduled evenly by cron: use a divisor of 60s (1s, 2s, 3s, 4s, 5s, 6s, 10s, 12s, 15s, 20s, 30s) or whole minutes dividing 60, or whole hours dividing 24';

type Loose = Partial<Record<string, unknown>>;
type Issues = {
  addIssue: (issue: { code: 'custom'; message: string; path?: PropertyKey[] }) => void;
};

/** Cross-key rules run whenever the mapping itself is a mapping, whatever its keys' problems. */
const WHEN_MAPPING = { when: (payload: z.core.ParsePayload) => isRecord(payload.value) };

/** A duration string → milliseconds, with an optional extra rule on the result. */
function duration(rule?: (ms: number, text: string) => string | undefined) {
  return z
    .string({ error: (issue) => `${DURATION_HINT} (got ${describeValue(issue.input)})` })
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      const problem =
        ms === null ? `${DURATION_HINT} (got ${describeValue(text)})` : rule?.(ms, text);
      if (ms === null || problem !== undefined) {
        ctx.addIssue({ code: 'custom', message: problem ?? DURATION_HINT });
        return z.NEVER;
      }
      return ms;
    });
}

const positiveDuration = () => duration((ms) => (ms > 0 ? undefined : 'must be greater than 0'));

/** An interval: at least 1 s and one that cron fires evenly (see `interval.ts`). */
const intervalDuration = () =>
  duration((ms, text) => {
    if (ms < 1000) return `must be at least 1s (got ${describeValue(text)})`;
    return cronForInterval(ms) === null ? `${describeValue(text)} ${CRON_HINT}` : undefined;
  });

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

const pingSchema = z
  .strictObject({
    enabled: z.boolean().default(DEFAULTS.ping.enabled),
    interval: intervalDuration().prefault(DEFAULTS.ping.interval),
    timeout: positiveDuration().prefault(DEFAULTS.ping.timeout),
  })
  .superRefine((value, ctx) => {
    shorterThan(value as Loose, ctx, 'timeout', 'interval', 'ping');
  }, WHEN_MAPPING);

/** A lifecycle address: the API's own field rules (a session request), plus what to expect. */
const addressSchema = sessionRequestSchema
  .pick({ street1: true, street2: true, city: true, state: true, zip: true })
  .extend({ expect: z.enum(EXPECTATIONS).default(DEFAULTS.expect) })
  .superRefine((value, ctx) => {
    const v = value as Loose;
    const fields = [v['street1'], v['city'], v['state'], v['zip']];
    // Only judge the combination when the fields themselves are well-typed and street1 is there;
    // otherwise their own problems already say what is wrong.
    if (typeof v['street1'] !== 'string') return;
    if (!fields.every((f) => f === undefined || typeof f === 'string')) return;
    if (addressCombination(v as Parameters<typeof addressCombination>[0]) === null) {
      ctx.addIssue({
        code: 'custom',
        message:
          'needs one of the address combinations the API accepts: street1 with zip, street1 with city and state, or street1 with city and zip',
      });
    }
  }, WHEN_MAPPING);

const lifecycleSchema = z
  .strictObject({
    enabled: z.boolean().default(DEFAULTS.lifecycle.enabled),
    interval: intervalDuration().prefault(DEFAULTS.lifecycle.interval),
    timeout: positiveDuration().prefault(DEFAULTS.lifecycle.timeout),
    poll_interval: positiveDuration().prefault(DEFAULTS.lifecycle.pollInterval),
    poll_timeout: positiveDuration().prefault(DEFAULTS.lifecycle.pollTimeout),
    // The API's own rule for campaign_id (length 1-100).
    campaign_id: sessionRequestSchema.shape.campaign_id
      .unwrap()
      .default(DEFAULTS.lifecycle.campaignId),
    addresses: z.array(addressSchema).optional(),
  })
  .superRefine((value, ctx) => {
    const v = value as Loose;
    shorterThan(v, ctx, 'timeout', 'interval', 'lifecycle');
    shorterThan(v, ctx, 'poll_interval', 'poll_timeout', 'lifecycle');
    shorterThan(v, ctx, 'poll_timeout', 'timeout', 'lifecycle');
    // No built-in default address: whether an address is served is a fact about the operator's
    // data, and a lifecycle check that expects the wrong outcome alerts for nothing.
    if (v['enabled'] === true && v['addresses'] === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['addresses'],
        message: 'required when lifecycle is enabled',
      });
    } else if (
      v['enabled'] === true &&
      Array.isArray(v['addresses']) &&
      v['addresses'].length === 0
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['addresses'],
        message: 'must list at least one address when lifecycle is enabled',
      });
    }
  }, WHEN_MAPPING);

/**
 * The configuration schema for one load, and the side table where the API-key rule leaves each
 * environment's resolved key (keyed by the parsed environment object, which is what the parse
 * returns), so the key is read once and only ever held in the result.
 */
export function buildConfigSchema(ctx: SchemaContext) {
  const secrets = new WeakMap<object, ResolvedSecret>();

  const environmentSchema = z
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
      thresholds: thresholdsSchema.prefault({}),
      request_budget_per_second: z
        .number()
        .positive()
        .max(MAX_REQUEST_BUDGET_PER_SECOND, {
          error: (issue) =>
            `must be at most ${MAX_REQUEST_BUDGET_PER_SECOND}, the API's rate limit per client IP (got ${describeValue(issue.input)})`,
        })
        .default(DEFAULTS.requestBudgetPerSecond),
      ping: pingSchema.prefault({}),
      lifecycle: lifecycleSchema.prefault({}),
    })
    .superRefine((value, issues) => {
      const v = value as Loose;
      checkBudget(v, issues);
      const secret = resolveSecret(v, issues, ctx);
      if (secret) secrets.set(value, secret);
    }, WHEN_MAPPING);

  const schema = z.strictObject({
    listen: z
      .strictObject({
        host: z.string().min(1).default(DEFAULTS.listen.host),
        port: portSchema.default(DEFAULTS.listen.port),
      })
      .prefault({}),
    state_file: z.string().min(1).optional(),
    log: z.strictObject({ level: z.enum(LOG_LEVELS).default(DEFAULTS.logLevel) }).prefault({}),
    shutdown_timeout: positiveDuration().prefault(DEFAULTS.shutdownTimeout),
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

  return { schema, secrets };
}

export type ConfigDocument = z.output<ReturnType<typeof buildConfigSchema>['schema']>;

/**
 * The request budget must let the most frequent enabled request go out on schedule: one ping per
 * ping interval, one poll per lifecycle poll interval.
 */
function checkBudget(v: Loose, issues: Issues): void {
  const budget = v['request_budget_per_second'];
  if (typeof budget !== 'number' || !(budget > 0)) return;
  const ping = asLoose(v['ping']);
  const lifecycle = asLoose(v['lifecycle']);
  const gaps: { key: string; ms: number }[] = [];
  if (ping['enabled'] === true && isMs(ping['interval'])) {
    gaps.push({ key: 'ping.interval', ms: ping['interval'] });
  }
  if (lifecycle['enabled'] === true && isMs(lifecycle['poll_interval'])) {
    gaps.push({ key: 'lifecycle.poll_interval', ms: lifecycle['poll_interval'] });
  }
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
  }
  const resolution = resolveApiKey(source, ctx.env, ctx.readFile);
  if (!resolution.ok) {
    issues.addIssue({ code: 'custom', path: [key], message: resolution.message });
    return undefined;
  }
  return { apiKey: resolution.apiKey, source };
}

function shorterThan(v: Loose, issues: Issues, key: string, other: string, section: string): void {
  const ms = v[key];
  const limit = v[other];
  if (!isMs(ms) || !isMs(limit) || ms < limit) return;
  issues.addIssue({
    code: 'custom',
    path: [key],
    message: `must be shorter than ${section}.${other} (${formatDuration(limit)}), got ${formatDuration(ms)}`,
  });
}

function greaterThan(v: Loose, issues: Issues, key: string, other: string, section: string): void {
  const ms = v[key];
  const floor = v[other];
  if (!isMs(ms) || !isMs(floor) || ms > floor) return;
  issues.addIssue({
    code: 'custom',
    path: [key],
    message: `must be greater than ${section}.${other} (${formatDuration(floor)}), got ${formatDuration(ms)}`,
  });
}

/** A parsed duration: a failed one is still the original string (or another non-number). */
function isMs(value: unknown): value is number {
  return typeof value === 'number';
}

function asLoose(value: unknown): Loose {
  return isRecord(value) ? value : {};
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
