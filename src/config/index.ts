/**
 * Loading and validating the isa-monitor configuration (docs/configuration.md): a YAML file or
 * environment variables, defaults first, unknown keys rejected at every level, and every problem reported at
 * once with its key path. Nothing here throws for a bad configuration and nothing logs; the caller
 * prints `formatProblems(problems)` and exits.
 */
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import {
  CONFIG_FILE_VAR,
  ENVIRONMENTS_VAR,
  applyOverrides,
  documentFromEnv,
  envValue,
  type Origins,
} from './env.js';
import {
  configErrorMap,
  formatKeyPath,
  problemsFromIssues,
  type ConfigProblem,
} from './problems.js';
import { DEFAULTS, buildConfigSchema, type ConfigDocument } from './schema.js';
import { MAX_CONFIG_FILE_BYTES, readBoundedText } from './files.js';
import { describeFileError, type ApiKeySource } from './secrets.js';
import type { ResolvedClientCertificate, ResolvedProxy } from './egress.js';
import type { AnyCheck } from '../kernel/check.js';
import { budgetWarnings } from './budget-fit.js';
import { maintenanceWarnings, toMaintenanceWindows } from './maintenance.js';
import type { MaintenanceWindow } from '../maintenance/windows.js';

export type { ConfigProblem } from './problems.js';
export type { ApiKeySource } from './secrets.js';
export { formatProblems } from './problems.js';
export { parseDuration, formatDuration } from './duration.js';
export { isDemoMode, defaultApiKeyEnv } from './env.js';
export { DEFAULTS, LOG_LEVELS } from './schema.js';
export { sectionOf } from './section.js';

/**
 * The settings of one watched environment: its own, then one section per check, under the check's
 * name; `sectionOf(environment, check)` reads a check's section with its type.
 */
export type EnvironmentConfig = EnvironmentSettings & { readonly [check: string]: unknown };

export interface EnvironmentSettings {
  name: string;
  /** http(s) URL without a trailing slash, credentials, query or fragment. */
  baseUrl: string;
  /**
   * The resolved secret; never log or print it. Null (and its source null) only where no source is
   * named, the default variable is unset and no enabled check sends an API request
   * (docs/configuration.md, "API keys").
   */
  apiKey: string | null;
  apiKeySource: ApiKeySource | null;
  /**
   * `ca_file`: its absolute path and PEM certificates, trusted in addition to the system's for
   * every request to the environment. Absent when not set.
   */
  extraTrust?: { caFile: string; certificates: readonly string[] };
  /**
   * The egress proxy (`proxy_url` or `proxy_from_environment`, docs/configuration.md, "Egress
   * proxy"); its password is a secret like the API key. Absent when requests go direct.
   */
  proxy?: ResolvedProxy;
  /** `client_cert_file` and `client_key_file`, read at load (the key is a secret). */
  clientCertificate?: ResolvedClientCertificate;
  thresholds: { expectedMs: number; warningMs: number; criticalMs: number };
  requestBudgetPerSecond: number;
  /** `maintenance`: the environment's windows; absent or empty when it has none. */
  maintenance?: readonly MaintenanceWindow[];
}

/**
 * The secrets an environment's configuration holds, for the logger to scrub from every line: the
 * API key, the proxy password and the client certificate's key.
 */
export function environmentSecrets(environment: EnvironmentSettings): string[] {
  // The key's lines one by one too: a log line holds it JSON-escaped, its line breaks as `\n`.
  const keyLines = (environment.clientCertificate?.key ?? '')
    .split(/\r?\n/)
    .filter((line) => line.length >= 16 && !line.startsWith('-----'));
  return [
    environment.apiKey,
    environment.proxy?.password,
    environment.clientCertificate?.key.trim(),
    ...keyLines,
  ].filter((secret): secret is string => typeof secret === 'string' && secret !== '');
}

/** The control probe (`control`): a plain GET of a neutral URL, per monitor. */
export interface ControlConfig {
  url: string;
  intervalMs: number;
  timeoutMs: number;
}

export interface MonitorConfig {
  /** `location`: the `location` label on every series; null or absent when unset. */
  location?: string | null;
  /** Null or absent when `control` is not configured. */
  control?: ControlConfig | null;
  listen: { host: string; port: number };
  /** Absolute path of the file recording synthetic sessions not yet closed. */
  stateFile: string;
  logLevel: string;
  shutdownTimeoutMs: number;
  /** The status page's history per environment and check (`server/history.ts`). */
  history: { windowMs: number; runs: number };
  environments: EnvironmentConfig[];
}

/**
 * A configuration and its warnings (deprecated keys: the file loads, but should change; what is
 * valid but cannot work as configured, such as `budget-fit.ts`, with its arithmetic), or every
 * problem that keeps it from loading.
 */
export type LoadResult =
  | { ok: true; config: MonitorConfig; warnings: ConfigProblem[] }
  | { ok: false; problems: ConfigProblem[] };

export interface LoadOptions {
  /** The checks of this build, from the composition root (`checks/index.ts`). */
  checks: readonly AnyCheck[];
  /** The `--config` option; wins over `ISA_MONITOR_CONFIG`. */
  configFile?: string;
  env: NodeJS.ProcessEnv;
  /** Working directory for relative paths given by variables and defaults; `process.cwd()`. */
  cwd?: string;
  /** Reads a file as UTF-8 text (config and key files); `fs.readFileSync` by default. */
  readFile?: (path: string) => string;
  /** Wall clock in ms, for the overlap warning of recurring windows; `Date.now` by default. */
  now?: () => number;
}

// Bounded and non-blocking: a FIFO or a device named as a file is a problem, never a hang.
const readUtf8 = (path: string): string => readBoundedText(path, MAX_CONFIG_FILE_BYTES);

/**
 * Loads the configuration: the file named by `configFile` or `ISA_MONITOR_CONFIG`, or without a
 * file the environments named by `ISA_ENVIRONMENTS`; then the `ISA_MONITOR_*` overrides; then
 * validation and API-key resolution. Returns every problem found, or the resolved configuration.
 */
export function loadConfig(opts: LoadOptions): LoadResult {
  const cwd = opts.cwd ?? process.cwd();
  const readFile = opts.readFile ?? readUtf8;
  const file = opts.configFile || envValue(opts.env, CONFIG_FILE_VAR);
  if (file) {
    const path = resolve(cwd, file);
    let text: string;
    try {
      text = readFile(path);
    } catch (err) {
      return failure([
        { path: file, message: `cannot read the config file: ${describeFileError(err)}` },
      ]);
    }
    // Environments come from one place: a leftover ISA_ENVIRONMENTS is refused, not ignored.
    const earlier: ConfigProblem[] =
      envValue(opts.env, ENVIRONMENTS_VAR) === undefined
        ? []
        : [
            {
              path: ENVIRONMENTS_VAR,
              message: 'cannot be combined with a config file: list the environments in the file',
            },
          ];
    return parseText(text, {
      checks: opts.checks,
      env: opts.env,
      cwd,
      readFile,
      now: opts.now,
      source: file,
      baseDir: dirname(path),
      earlier,
    });
  }
  if (envValue(opts.env, ENVIRONMENTS_VAR) === undefined) {
    return failure([
      {
        path: '(config)',
        message: `no configuration: pass --config FILE, set ${CONFIG_FILE_VAR}, or set ${ENVIRONMENTS_VAR} (demo mode starts only when no ISA_* variable is set)`,
      },
    ]);
  }
  const origins: Origins = new Map();
  const fromEnv = documentFromEnv(opts.env, origins, opts.checks);
  return validate(
    fromEnv.raw,
    { checks: opts.checks, env: opts.env, cwd, readFile, baseDir: cwd, now: opts.now },
    origins,
    fromEnv.problems,
  );
}

/**
 * Parses and validates configuration text (YAML) as if it were the file: `ISA_MONITOR_*`
 * overrides apply, relative paths resolve against `cwd`, and YAML syntax problems are reported as
 * `<source>:<line>:<column>` (source defaults to `config`).
 */
export function parseConfigText(
  text: string,
  opts: {
    checks: readonly AnyCheck[];
    env: NodeJS.ProcessEnv;
    cwd?: string;
    readFile?: (path: string) => string;
    source?: string;
    now?: () => number;
  },
): LoadResult {
  const cwd = opts.cwd ?? process.cwd();
  return parseText(text, {
    checks: opts.checks,
    env: opts.env,
    cwd,
    now: opts.now,
    readFile: opts.readFile ?? readUtf8,
    source: opts.source ?? 'config',
    baseDir: cwd,
  });
}

interface Context {
  checks: readonly AnyCheck[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  readFile: (path: string) => string;
  /** Relative paths written in the file resolve against this. */
  baseDir: string;
  now?: (() => number) | undefined;
}

function parseText(
  text: string,
  ctx: Context & { source: string; earlier?: ConfigProblem[] },
): LoadResult {
  const problems: ConfigProblem[] = [...(ctx.earlier ?? [])];
  const lineCounter = new LineCounter();
  // merge: `<<: *defaults` is how YAML users share settings between environments.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, merge: true });
  if (doc.errors.length > 0) {
    // Keys and values of a document that does not parse are guesses; report the syntax only.
    for (const error of doc.errors) {
      const { line, col } = lineCounter.linePos(error.pos[0]);
      problems.push({ path: `${ctx.source}:${line}:${col}`, message: yamlMessage(error) });
    }
    return failure(problems);
  }
  let raw: unknown;
  try {
    raw = doc.toJS();
  } catch (err) {
    // e.g. an alias to an anchor that does not exist, or an alias bomb.
    return failure([
      ...problems,
      {
        path: ctx.source,
        message: yamlMessage({ code: '', message: String((err as Error).message) }),
      },
    ]);
  }
  const origins: Origins = new Map();
  // An empty file is an empty mapping, so the problem reads "environments: is required".
  return validate(raw ?? {}, ctx, origins, problems);
}

function yamlMessage(error: { code: string; message: string }): string {
  if (error.code === 'MULTIPLE_DOCS') return 'the file must hold a single YAML document';
  return error.message.split('\n')[0] ?? error.message;
}

/**
 * Validates a raw document (what the YAML parses to). Exported for callers that build a
 * configuration in code, such as the `check` command's `--base-url` form.
 */
export function validateConfigDocument(
  raw: unknown,
  opts: {
    checks: readonly AnyCheck[];
    env: NodeJS.ProcessEnv;
    cwd?: string;
    readFile?: (path: string) => string;
  },
): LoadResult {
  const cwd = opts.cwd ?? process.cwd();
  return validate(
    raw,
    { checks: opts.checks, env: opts.env, cwd, readFile: opts.readFile ?? readUtf8, baseDir: cwd },
    new Map(),
    [],
  );
}

function validate(
  raw: unknown,
  ctx: Context,
  origins: Origins,
  earlier: ConfigProblem[],
): LoadResult {
  const withOverrides = applyOverrides(raw, ctx.env, origins);
  const resolved = buildConfigSchema(ctx);
  const { schema } = resolved;
  const parsed = schema.safeParse(withOverrides, { error: configErrorMap });
  if (!parsed.success) {
    const problems = problemsFromIssues(parsed.error.issues, schema).map((p) => ({
      ...p,
      path: origins.get(p.path) ?? p.path,
    }));
    return failure([...earlier, ...problems]);
  }
  if (earlier.length > 0) return failure(earlier);
  const config = toMonitorConfig(parsed.data, resolved, ctx, origins);
  const deprecated = deprecations(parsed.data, ctx.checks).map((p) => ({
    ...p,
    path: origins.get(p.path) ?? p.path,
  }));
  const nowMs = (ctx.now ?? Date.now)();
  return {
    ok: true,
    config,
    warnings: [
      ...deprecated,
      ...budgetWarnings(config.environments, ctx.checks),
      ...maintenanceWarnings(config.environments, nowMs),
    ],
  };
}

/** Every deprecated key set in a check section of an environment, with its key path. */
function deprecations(doc: ConfigDocument, checks: readonly AnyCheck[]): ConfigProblem[] {
  return doc.environments.flatMap((env, index) => {
    const sections = env as unknown as Record<string, unknown>;
    return checks.flatMap((check) =>
      check.config.deprecations(sections[check.name]).map(({ key, message }) => ({
        path: formatKeyPath(['environments', index, check.name, key]),
        message,
      })),
    );
  });
}

type Resolved = Pick<
  ReturnType<typeof buildConfigSchema>,
  'secrets' | 'trust' | 'proxies' | 'clientCertificates'
>;

function toMonitorConfig(
  doc: ConfigDocument,
  resolved: Resolved,
  ctx: Context,
  origins: Origins,
): MonitorConfig {
  // A path from a variable is the shell's, relative to the working directory; one written in the
  // file is relative to the file, like every other path in it.
  const stateFile =
    doc.state_file === undefined
      ? resolve(ctx.cwd, DEFAULTS.stateFile)
      : resolve(origins.has(formatKeyPath(['state_file'])) ? ctx.cwd : ctx.baseDir, doc.state_file);
  return {
    location: doc.location ?? null,
    control: doc.control
      ? { url: doc.control.url, intervalMs: doc.control.interval, timeoutMs: doc.control.timeout }
      : null,
    listen: { host: doc.listen.host, port: doc.listen.port },
    stateFile,
    logLevel: doc.log.level,
    shutdownTimeoutMs: doc.shutdown_timeout,
    history: { windowMs: doc.history.window, runs: doc.history.runs },
    environments: doc.environments.map((env) => {
      const secret = resolved.secrets.get(env);
      const trust = resolved.trust.get(env);
      const proxy = resolved.proxies.get(env);
      const clientCertificate = resolved.clientCertificates.get(env);
      // The API-key rule stores a key for every environment that passed; a parse that succeeded
      // without one would be a bug here, not a configuration problem.
      if (!secret) throw new Error(`internal: no API key resolved for environment ${env.name}`);
      const settings: EnvironmentSettings = {
        name: env.name,
        baseUrl: env.base_url,
        apiKey: secret.apiKey,
        apiKeySource: secret.source,
        ...(trust ? { extraTrust: { caFile: trust.path, certificates: trust.certificates } } : {}),
        ...(proxy ? { proxy } : {}),
        ...(clientCertificate ? { clientCertificate } : {}),
        thresholds: {
          expectedMs: env.thresholds.expected,
          warningMs: env.thresholds.warning,
          criticalMs: env.thresholds.critical,
        },
        requestBudgetPerSecond: env.request_budget_per_second,
        maintenance: toMaintenanceWindows(env.maintenance),
      };
      const sections = env as unknown as Record<string, unknown>;
      const checks = Object.fromEntries(
        ctx.checks.map((check) => [
          check.name,
          check.config.toConfig(sections[check.name], { baseUrl: env.base_url }),
        ]),
      );
      return { ...settings, ...checks };
    }),
  };
}

function failure(problems: ConfigProblem[]): LoadResult {
  return { ok: false, problems };
}
