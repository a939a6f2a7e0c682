/**
 * Configuration from environment variables: the `ISA_MONITOR_*` overrides that apply on top of a
 * file, the file-less configuration (`ISA_ENVIRONMENTS` plus `ISA_<NAME>_*`), and the demo-mode
 * rule. An empty variable counts as unset, as in `FOO=` lines of env files and compose files.
 */
import type { AnyCheck } from '../kernel/check.js';
import { formatKeyPath, type ConfigProblem } from './problems.js';

/** Names the configuration file (the `--config` option wins). */
export const CONFIG_FILE_VAR = 'ISA_MONITOR_CONFIG';
/** Comma-separated environment names for a configuration without a file. */
export const ENVIRONMENTS_VAR = 'ISA_ENVIRONMENTS';

/** Where problems about a value that came from a variable are reported: key path → variable. */
export type Origins = Map<string, string>;

interface Override {
  variable: string;
  path: readonly string[];
  /** Turns the variable's text into the type the YAML would hold. */
  convert: (text: string) => unknown;
}

/** Variables that override single keys of the file (or of the defaults when there is no file). */
export const OVERRIDES: readonly Override[] = [
  { variable: 'ISA_MONITOR_LISTEN_HOST', path: ['listen', 'host'], convert: (t) => t },
  // Kept as text when not all digits, so the port rule reports it against the variable.
  { variable: 'ISA_MONITOR_LISTEN_PORT', path: ['listen', 'port'], convert: toNumberIfDigits },
  { variable: 'ISA_MONITOR_LOG_LEVEL', path: ['log', 'level'], convert: (t) => t },
  { variable: 'ISA_MONITOR_STATE_FILE', path: ['state_file'], convert: (t) => t },
  { variable: 'ISA_MONITOR_SHUTDOWN_TIMEOUT', path: ['shutdown_timeout'], convert: (t) => t },
];

/** The sections `checks` need in a file-less configuration. */
function filelessSections(checks: readonly AnyCheck[]): Record<string, unknown> {
  return Object.fromEntries(
    checks.flatMap((check) =>
      check.config.fileless ? [[check.name, structuredClone(check.config.fileless)]] : [],
    ),
  );
}

/** A variable's value, with empty treated as unset. */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** `sandbox-eu` → `ISA_SANDBOX_EU`: the prefix of an environment's own variables. */
export function envVarPrefix(environmentName: string): string {
  return `ISA_${environmentName.toUpperCase().replace(/-/g, '_')}`;
}

/** The variable an environment's API key is read from when the config names no source. */
export function defaultApiKeyEnv(environmentName: string): string {
  return `${envVarPrefix(environmentName)}_API_KEY`;
}

/**
 * True when `run` should start in demo mode (docs/cli.md): no config file was named and no
 * variable whose name starts with `ISA_` is set (an empty one counts as unset).
 */
export function isDemoMode(opts: { configFile?: string; env: NodeJS.ProcessEnv }): boolean {
  if (opts.configFile) return false;
  return !Object.keys(opts.env).some((name) => name.startsWith('ISA_') && envValue(opts.env, name));
}

/**
 * Applies the `ISA_MONITOR_*` overrides to the raw document (a copy; the input is not changed) and
 * records which key paths came from which variable. A section that is not a mapping is left alone:
 * its own problem is reported instead.
 */
export function applyOverrides(raw: unknown, env: NodeJS.ProcessEnv, origins: Origins): unknown {
  if (!isRecord(raw)) return raw;
  let result: Record<string, unknown> = raw;
  for (const override of OVERRIDES) {
    const text = envValue(env, override.variable);
    if (text === undefined) continue;
    const updated = setIn(result, override.path, override.convert(text));
    if (updated) {
      result = updated;
      origins.set(formatKeyPath(override.path), override.variable);
    }
  }
  return result;
}

/**
 * The raw document of a configuration without a file: one environment per name in
 * `ISA_ENVIRONMENTS`, its base URL from `ISA_<NAME>_BASE_URL` and its key from
 * `ISA_<NAME>_API_KEY` (the default key variable) or the file named by `ISA_<NAME>_API_KEY_FILE`.
 */
export function documentFromEnv(
  env: NodeJS.ProcessEnv,
  origins: Origins,
  checks: readonly AnyCheck[],
): { raw: Record<string, unknown>; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const names = (envValue(env, ENVIRONMENTS_VAR) ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  origins.set('environments', ENVIRONMENTS_VAR);
  const environments = names.map((name, i) => {
    const prefix = envVarPrefix(name);
    const at = (key: string) => formatKeyPath(['environments', i, key]);
    const environment: Record<string, unknown> = {
      name,
      base_url: envValue(env, `${prefix}_BASE_URL`),
      // What a check needs to run without a file (e.g. the lifecycle check's address).
      ...filelessSections(checks),
    };
    origins.set(at('name'), ENVIRONMENTS_VAR);
    origins.set(at('base_url'), `${prefix}_BASE_URL`);
    origins.set(at('api_key_env'), `${prefix}_API_KEY`);
    const keyFile = envValue(env, `${prefix}_API_KEY_FILE`);
    if (keyFile !== undefined) {
      if (envValue(env, `${prefix}_API_KEY`) !== undefined) {
        problems.push({
          path: `${prefix}_API_KEY_FILE`,
          message: `cannot be combined with ${prefix}_API_KEY: set only one of them`,
        });
      } else {
        environment['api_key_file'] = keyFile;
        origins.set(at('api_key_file'), `${prefix}_API_KEY_FILE`);
      }
    }
    const caFile = envValue(env, `${prefix}_CA_FILE`);
    if (caFile !== undefined) {
      environment['ca_file'] = caFile;
      origins.set(at('ca_file'), `${prefix}_CA_FILE`);
    }
    return environment;
  });
  return { raw: { environments }, problems };
}

function toNumberIfDigits(text: string): unknown {
  return /^\d+$/.test(text) ? Number(text) : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A copy of `target` with `value` at `path`, or null when a section on the way is not a mapping. */
function setIn(
  target: Record<string, unknown>,
  path: readonly string[],
  value: unknown,
): Record<string, unknown> | null {
  const [head, ...rest] = path;
  if (head === undefined) return null;
  if (rest.length === 0) return { ...target, [head]: value };
  const child = target[head] ?? {};
  if (!isRecord(child)) return null;
  const updated = setIn(child, rest, value);
  return updated ? { ...target, [head]: updated } : null;
}
