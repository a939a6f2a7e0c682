import { buildReport } from '../report/compute.js';
import { defaultSpecPath, loadSpecs, objectivesOf } from '../report/objectives.js';
import { readBoundedText } from '../config/files.js';
import { describeFileError } from '../config/secrets.js';
import {
  DEFAULT_MAX_ANSWER_BYTES,
  DEFAULT_TIMEOUT_MS,
  prometheusClient,
  ReportError,
  type ClientOptions,
} from '../report/prometheus.js';
import { FORMATS, render, type Format } from '../report/render.js';
import { COMMAND_USAGE } from './usage.js';
import { EXIT, parse, UsageError, type CliIO } from './io.js';

/** A date, or a date and time; without a zone it is UTC (docs/cli.md, "report"). */
const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

export function parseInstant(flag: string, value: string | undefined): number {
  if (value === undefined) throw new UsageError(`report needs ${flag} ISO-8601 date or time`);
  const m = ISO.exec(value);
  const text = m && value.length > 10 && m[1] === undefined ? `${value}Z` : value;
  const ms = m ? Date.parse(text.replace(' ', 'T')) : NaN;
  if (Number.isNaN(ms)) {
    throw new UsageError(`${flag}: not an ISO-8601 date or time: ${value}`);
  }
  return ms / 1000;
}

/** `isa-monitor report --prometheus URL --from ISO --to ISO [--environment NAME] [--format F]` */
export async function reportCommand(args: string[], io: CliIO): Promise<number> {
  const { values } = parse(args, {
    prometheus: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    environment: { type: 'string' },
    format: { type: 'string' },
    slo: { type: 'string' },
    'prometheus-password-file': { type: 'string' },
    timeout: { type: 'string' },
    'max-answer-mb': { type: 'string' },
    help: { type: 'boolean' },
  });
  if (values.help) {
    io.out(COMMAND_USAGE['report'] ?? '');
    return EXIT.ok;
  }
  if (!values.prometheus) throw new UsageError('report needs --prometheus URL');
  const from = parseInstant('--from', values.from);
  const to = parseInstant('--to', values.to);
  if (from >= to)
    throw new UsageError(`--from (${values.from}) must be before --to (${values.to})`);
  const format = (values.format ?? 'markdown') as Format;
  if (!FORMATS.includes(format)) {
    throw new UsageError(
      `--format: unknown format "${values.format}"; known: ${FORMATS.join(', ')}`,
    );
  }
  const progress = io.errIsTTY === true;
  const connection = connectionOptions(values);
  try {
    const specs = await loadSpecs(values.slo ?? defaultSpecPath());
    const client = prometheusClient(values.prometheus, {
      ...connection,
      onRequest: progress
        ? ({ expr, chunk, chunks }) =>
            io.err(`report: ${expr.slice(0, 60)}${chunks > 1 ? ` (chunk ${chunk}/${chunks})` : ''}`)
        : undefined,
    });
    const report = await buildReport(client, {
      from,
      to,
      objectives: objectivesOf(specs),
      specs,
      ...(values.environment === undefined ? {} : { environment: values.environment }),
    });
    io.out(render(report, format));
    return EXIT.ok;
  } catch (err) {
    if (err instanceof ReportError) {
      io.err(`isa-monitor report: ${err.message}`);
      return EXIT.checkFailed;
    }
    throw err;
  }
}

/** A positive number of a flag, or a usage error naming it. */
function positive(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) {
    throw new UsageError(`${flag}: not a positive number: ${value}`);
  }
  return number;
}

/**
 * The request timeout, the answer cap and the basic-auth password of `report` (docs/cli.md,
 * "report"): the password file is read like an API key file, and never printed.
 */
function connectionOptions(values: {
  'prometheus-password-file'?: string | undefined;
  timeout?: string | undefined;
  'max-answer-mb'?: string | undefined;
}): ClientOptions {
  const timeoutMs = positive('--timeout', values.timeout, DEFAULT_TIMEOUT_MS / 1000) * 1000;
  const maxMb = positive(
    '--max-answer-mb',
    values['max-answer-mb'],
    DEFAULT_MAX_ANSWER_BYTES / 2 ** 20,
  );
  const options: ClientOptions = { timeoutMs, maxAnswerBytes: Math.round(maxMb * 2 ** 20) };
  const file = values['prometheus-password-file'];
  if (file === undefined) return options;
  try {
    return { ...options, password: readBoundedText(file, 4096).trim() };
  } catch (err) {
    throw new UsageError(`--prometheus-password-file: ${describeFileError(err)}`);
  }
}
