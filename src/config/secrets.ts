/**
 * API keys come from the process environment or from a file, never from the YAML itself, so a
 * config file can be committed and shared. Messages name the variable or file and never the value.
 */

import { lstatSync } from 'node:fs';

/** Where an environment's API key came from (safe to log: it names the source, not the key). */
export type ApiKeySource = { kind: 'env'; name: string } | { kind: 'file'; path: string };

export type SecretResolution = { ok: true; apiKey: string } | { ok: false; message: string };

/**
 * Variable names must be upper-case: this also catches the key itself pasted into `api_key_env`
 * (keys contain lower-case letters), which would otherwise be quoted in "is not set".
 */
export const ENV_VAR_NAME_PATTERN = /^[A-Z_][A-Z0-9_]*$/;

// An Authorization header cannot carry these; a key with them is a copy-paste accident such as
// "Bearer abc" or a key file with two lines.
const INVALID_KEY_CHARACTERS = /[\s\p{Cc}]/u;

/** Reads the API key from its source: trimmed, non-empty, one token. */
export function resolveApiKey(
  source: ApiKeySource,
  env: NodeJS.ProcessEnv,
  readFile: (path: string) => string,
): SecretResolution {
  if (source.kind === 'env') {
    const raw = env[source.name];
    const what = describeVariable(source.name, env);
    if (raw === undefined) return { ok: false, message: `${what} is not set` };
    return checkKey(raw.trim(), what);
  }
  let raw: string;
  try {
    raw = readFile(source.path);
  } catch (err) {
    const shown = describeKeyFile(source.path);
    return { ok: false, message: `cannot read ${shown}: ${describeFileError(err)}` };
  }
  // It was read, so it exists: a real path, safe to show.
  return checkKey(raw.trim(), `file ${source.path}`);
}

/** Longest key accepted; anything longer is a file that holds something else. */
export const MAX_API_KEY_LENGTH = 4096;

// A segment of a conventional variable name: a word, maybe with a short number (`V2`, `EU1`).
const NAME_SEGMENT = /^(?:[A-Z]{1,24}[0-9]{0,3}|[0-9]{1,3})$/;

/**
 * "environment variable NAME", or a description without the name when the name might be a key
 * pasted in its place (an upper-case key passes `ENV_VAR_NAME_PATTERN`). A name is shown only
 * when the variable exists, or when it looks like a conventional name (words of letters joined
 * by `_`, at most 64 characters) and is not the value of some other variable.
 */
export function describeVariable(name: string, env: NodeJS.ProcessEnv): string {
  if (env[name] !== undefined) return `environment variable ${name}`;
  const conventional =
    name.length <= 64 &&
    ENV_VAR_NAME_PATTERN.test(name) &&
    name.split('_').every((s) => s === '' || NAME_SEGMENT.test(s)) &&
    /[A-Z]/.test(name);
  const isSomeValue = Object.values(env).some((v) => v !== undefined && v.trim() === name);
  if (conventional && !isSomeValue) return `environment variable ${name}`;
  return 'the environment variable named by api_key_env (its name is not shown: it looks like a key, not a variable name)';
}

/**
 * The path, or a description without it when nothing exists there: a path that names no file is
 * most often a key pasted where the path belongs, and must not be printed.
 */
export function describeKeyFile(path: string): string {
  try {
    lstatSync(path);
    return path;
  } catch {
    return 'the file named by api_key_file (its path is not shown: nothing exists there, and it may be a key pasted in its place)';
  }
}

function checkKey(key: string, what: string): SecretResolution {
  if (key === '') return { ok: false, message: `${what} is empty` };
  if (key.length > MAX_API_KEY_LENGTH) {
    return { ok: false, message: `${what} holds more than ${MAX_API_KEY_LENGTH} characters` };
  }
  if (INVALID_KEY_CHARACTERS.test(key)) {
    return {
      ok: false,
      message: `${what} contains whitespace or control characters inside the key`,
    };
  }
  return { ok: true, apiKey: key };
}

const FILE_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory',
  ENOTDIR: 'a parent is not a directory',
  ENOTREG: 'not a regular file (a FIFO, device or socket cannot hold a key or a config)',
  EFBIG: 'larger than the size limit',
  ELOOP: 'too many symbolic links',
};

/** A file error as a short phrase from its stable `code`, never the message (it may hold paths). */
export function describeFileError(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return FILE_ERRORS[code] ?? code;
  return 'unreadable';
}
