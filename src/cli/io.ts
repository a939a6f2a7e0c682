import { parseArgs, type ParseArgsConfig } from 'node:util';

/** What a command may touch of the process; only src/cli.ts builds one. */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  isTTY: boolean;
  /** Whether stderr is a terminal: progress lines go there only then. */
  errIsTTY?: boolean;
  /** Resolves on the first SIGTERM or SIGINT. */
  waitForStop(): Promise<string>;
  /**
   * Calls `listener` at every SIGHUP (docs/configuration.md, "Reload"), and at once for one that
   * came before it was set. Only `run` listens: for the other commands SIGHUP ends the process.
   */
  onReloadRequest(listener: () => void): void;
}

export class UsageError extends Error {}

export const EXIT = { ok: 0, checkFailed: 1, usage: 2 } as const;

/** parseArgs with the project's rules: strict, usage errors as UsageError. */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
