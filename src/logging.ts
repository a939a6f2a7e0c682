/**
 * The daemon's pino logger. JSON lines by default, pino-pretty when stdout is a terminal. Keys can
 * never reach a log line: known secret fields are redacted by path, and as a last line of defence
 * every configured API key is scrubbed from each serialised line before it is written.
 */
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { PrettyStream } from 'pino-pretty';

/** pino-pretty is loaded only for a terminal: a daemon logging JSON never holds it. */
function prettyStream(): PrettyStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l' });
}

export interface LoggerOptions {
  level: string;
  /** Secret values to scrub from every line (the configured API keys). */
  secrets: string[];
  /** Where lines go; default stdout (pretty when it is a TTY). */
  destination?: DestinationStream;
  pretty?: boolean;
}

const REDACT_PATHS = [
  'apiKey',
  '*.apiKey',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'config.environments[*].apiKey',
];

/** Creates the logger; `secrets` are replaced by `[REDACTED]` wherever they would appear. */
export function createLogger(opts: LoggerOptions): Logger {
  const secrets = opts.secrets.filter((s) => s.length >= 4);
  const usePretty =
    opts.pretty ?? (opts.destination === undefined && process.stdout.isTTY === true);
  const destination = opts.destination ?? (usePretty ? prettyStream() : pino.destination(1));
  return pino(
    {
      level: opts.level,
      base: { name: 'isa-monitor' },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      hooks: {
        streamWrite: (line) => scrub(line, secrets),
      },
    },
    destination,
  );
}

/** Replaces every occurrence of each secret in `text`. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join('[REDACTED]');
  }
  return out;
}
