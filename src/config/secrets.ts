/**
 * API keys come from the process environment or from a file, never from the YAML itself, so a
 * config file can be committed and shared. Messages name the variable or file and never the value.
 */

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
    const what = `environment variable ${source.name}`;
    if (raw === undefined) return { ok: false, message: `${what} is not set` };
    return checkKey(raw.trim(), what);
  }
  let raw: string;
  try {
    raw = readFile(source.path);
  } catch (err) {
    return { ok: false, message: `cannot read ${source.path}: ${describeFileError(err)}` };
  }
  return checkKey(raw.trim(), `file ${source.path}`);
}

function checkKey(key: string, what: string): SecretResolution {
  if (key === '') return { ok: false, message: `${what} is empty` };
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
};

/** A file error as a short phrase from its stable `code`, never the message (it may hold paths). */
export function describeFileError(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return FILE_ERRORS[code] ?? code;
  return 'unreadable';
}
