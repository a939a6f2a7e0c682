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
  'config.environments[*].proxy.password',
  'config.environments[*].clientCertificate.key',
  'proxy.password',
  '*.proxy.password',
  'proxy-authorization',
  '*.proxy-authorization',
  'headers.proxy-authorization',
];

/** Each logger's secrets: a reload adds the keys it reads (`addSecrets`). */
const SECRETS = new WeakMap<Logger, string[]>();

/** Creates the logger; `secrets` are replaced by `[REDACTED]` wherever they would appear. */
export function createLogger(opts: LoggerOptions): Logger {
  const secrets = opts.secrets.filter((s) => s.length >= 4);
  const destination = opts.destination ?? standardDestination(opts.pretty);
  const logger = pino(
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
  SECRETS.set(logger, secrets);
  return logger;
}

/**
 * Scrubs `keys` from every later line of `logger` too: a reloaded configuration's API keys are
 * added before anything about the reload is logged (docs/configuration.md, "Reload"). Keys of
 * the earlier configuration stay scrubbed.
 */
export function addSecrets(logger: Logger, keys: readonly string[]): void {
  const secrets = SECRETS.get(logger);
  if (secrets === undefined) return;
  for (const key of keys) if (key.length >= 4 && !secrets.includes(key)) secrets.push(key);
}

/** Stdout: pino-pretty when `pretty` (by default: when stdout is a terminal), else JSON lines. */
export function standardDestination(
  usePretty: boolean = process.stdout.isTTY === true,
): DestinationStream {
  return usePretty ? prettyStream() : pino.destination(1);
}

/** A destination that holds its lines until `release()`. */
export interface HeldDestination extends DestinationStream {
  /** Writes the held lines to the target in order; every later line goes straight there. */
  release(): void;
}

/**
 * Holds every line written to it until `release()`. Demo mode writes its banner straight to the
 * target and then releases: the banner is the first line even though it names a URL that only
 * exists once the simulator and the daemon (which log while starting) are up.
 */
export function holdLines(target: DestinationStream): HeldDestination {
  let held: string[] | null = [];
  return {
    write(line: string) {
      if (held === null) target.write(line);
      else held.push(line);
    },
    release() {
      if (held === null) return;
      for (const line of held) target.write(line);
      held = null;
    },
  };
}

/** Replaces every occurrence of each secret in `text`. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join('[REDACTED]');
  }
  return out;
}
