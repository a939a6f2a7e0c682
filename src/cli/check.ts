import { pino } from 'pino';
import type { AnyCheck, CheckLogger, CheckResult } from '../kernel/check.js';
import { CHECK_LIST, CHECK_NAMES, SUMMARY_KEYS, findCheck } from '../checks/index.js';
import { withFields } from '../kernel/logger.js';
import {
  environmentSecrets,
  formatProblems,
  loadConfig,
  type EnvironmentConfig,
  type LoadResult,
  validateConfigDocument,
} from '../config/index.js';
import { EnvironmentRuntime } from '../environment.js';
import { createLogger } from '../logging.js';
import { toCheckJson } from '../server/status.js';
import { SessionLedger } from '../sessions/ledger.js';
import { UNRECOVERABLE_MESSAGE, unrecoverableFields } from '../sessions/unrecoverable.js';
import { VERSION } from '../version.js';
import { EXIT, parse, UsageError, type CliIO } from './io.js';
import { COMMAND_USAGE } from './usage.js';

/** The checks' own options of the ad-hoc (`--base-url`) form. */
const AD_HOC_OPTIONS: Record<string, { type: 'string' }> = Object.assign(
  {},
  ...CHECK_LIST.map((check: AnyCheck) => check.adHoc?.options ?? {}),
);

/** `isa-monitor check <name> ...` for every registered check. */
export async function checkCommand(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      config: { type: 'string' },
      environment: { type: 'string' },
      'base-url': { type: 'string' },
      'api-key-env': { type: 'string' },
      'api-key-file': { type: 'string' },
      'ca-file': { type: 'string' },
      ...AD_HOC_OPTIONS,
      json: { type: 'boolean' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean' },
    },
    true,
  );
  if (values.help) {
    io.out(COMMAND_USAGE['check'] ?? '');
    return EXIT.ok;
  }
  const check = positionals.length === 1 ? findCheck(positionals[0] ?? '') : undefined;
  if (check === undefined) {
    throw new UsageError(`check expects one of: ${CHECK_NAMES.join(', ')}`);
  }

  const loaded = values['base-url']
    ? configFromFlags(values, check, io)
    : configFromFile(values, io);
  if (!loaded.ok) {
    io.err(formatProblems(loaded.problems));
    return EXIT.usage;
  }
  const { config } = loaded;
  for (const warning of loaded.warnings) io.err(`warning: ${formatProblems([warning])}`);
  const environment = values.environment
    ? config.environments.find((e) => e.name === values.environment)
    : config.environments[0];
  if (!environment) {
    const known = config.environments.map((e) => e.name).join(', ');
    throw new UsageError(`no environment "${values.environment}" in the config (known: ${known})`);
  }

  const logger = createLogger({
    level: values.verbose ? 'debug' : 'warn',
    secrets: environmentSecrets(environment),
    destination: pino.destination(2),
    pretty: false,
  });
  const log = withFields(logger, { environment: environment.name });
  const { result, retryAfterMs } = await runOnce(environment, check, config.stateFile, log, io);
  logger.flush();
  // A one-shot check never waits out a Retry-After: it says how long the API asked to wait.
  const retryAfterSeconds = retryAfterMs > 0 ? Math.ceil(retryAfterMs / 1000) : null;
  if (retryAfterSeconds !== null) {
    io.err(`rate limited: the API asks to wait ${retryAfterSeconds} s before the next request`);
  }
  io.out(
    values.json
      ? JSON.stringify(
          { ...toCheckJson(result, SUMMARY_KEYS), retry_after_seconds: retryAfterSeconds },
          null,
          2,
        )
      : formatTrace(result, check, environment),
  );
  return result.outcome === 'pass' ? EXIT.ok : EXIT.checkFailed;
}

async function runOnce(
  environment: EnvironmentConfig,
  check: AnyCheck,
  stateFile: string,
  log: CheckLogger,
  io: CliIO,
): Promise<{ result: CheckResult; retryAfterMs: number }> {
  const ledger = await SessionLedger.open(stateFile);
  const runtime = new EnvironmentRuntime(environment, {
    checks: CHECK_LIST,
    ledger,
    userAgent: `isa-monitor/${VERSION}`,
    log,
    onUnrecoverable: (intent) => log.error(unrecoverableFields(intent), UNRECOVERABLE_MESSAGE),
  });
  const abort = new AbortController();
  void io.waitForStop().then(() => abort.abort(new Error('interrupted')));
  try {
    // Close what an earlier interrupted process left open before creating anything new. Only
    // sessions whose owner is gone: a running daemon's sessions are the daemon's.
    await runtime.reaper.sweep({ force: true, signal: abort.signal });
    const result = await runtime.run(check, abort.signal);
    await runtime.tracking.settled();
    // Bounded by this check's own request timeout, not the longest of all checks.
    await runtime.sweepAfter(check, abort.signal);
    const left = ledger.count(environment.name);
    if (left > 0) {
      io.err(`warning: ${left} synthetic session(s) could not be closed; listed in ${stateFile}`);
    }
    return { result, retryAfterMs: runtime.gate.remainingMs() };
  } finally {
    await runtime.close();
    ledger.close();
  }
}

type Flags = Record<string, string | boolean | undefined>;

function configFromFile(values: Flags, io: CliIO): LoadResult {
  if (values['ca-file'] !== undefined) {
    throw new UsageError('--ca-file goes with --base-url; a configured environment sets ca_file');
  }
  const configFile = (values['config'] as string | undefined) ?? io.env['ISA_MONITOR_CONFIG'];
  if (!configFile && !io.env['ISA_ENVIRONMENTS']) {
    throw new UsageError('check needs --config FILE (or ISA_MONITOR_CONFIG), or --base-url URL');
  }
  return loadConfig({ checks: CHECK_LIST, configFile, env: io.env, cwd: io.cwd });
}

function configFromFlags(values: Flags, check: AnyCheck, io: CliIO): LoadResult {
  const keyEnv = values['api-key-env'] as string | undefined;
  const keyFile = values['api-key-file'] as string | undefined;
  const caFile = values['ca-file'] as string | undefined;
  const keyless = check.usesApiKey === false && keyEnv === undefined && keyFile === undefined;
  if (!keyless && (keyEnv === undefined) === (keyFile === undefined)) {
    throw new UsageError(
      '--base-url needs exactly one of --api-key-env VAR or --api-key-file FILE',
    );
  }
  // Only the named check is enabled; its own options (if any) make the rest of its section.
  const own: Record<string, string | undefined> = {};
  for (const option of Object.keys(check.adHoc?.options ?? {})) {
    own[option] = values[option] as string | undefined;
  }
  const made = check.adHoc?.section(own) ?? { section: {} };
  if ('problem' in made) throw new UsageError(made.problem);
  const sections = Object.fromEntries(
    CHECK_LIST.map((c: AnyCheck) =>
      c === check ? [c.name, { ...made.section, enabled: true }] : [c.name, { enabled: false }],
    ),
  );
  const document = {
    environments: [
      {
        name: (values['environment'] as string | undefined) ?? 'cli',
        base_url: values['base-url'],
        // A keyless check names no source: its environment needs no key (docs/configuration.md).
        ...(keyless ? {} : keyEnv ? { api_key_env: keyEnv } : { api_key_file: keyFile }),
        ...(caFile === undefined ? {} : { ca_file: caFile }),
        // One-shot: no schedule to fit into, so allow the spec's full polling window.
        request_budget_per_second: 2,
        ...sections,
      },
    ],
  };
  return validateConfigDocument(document, { checks: CHECK_LIST, env: io.env, cwd: io.cwd });
}

function formatTrace(result: CheckResult, check: AnyCheck, environment: EnvironmentConfig): string {
  const lines = [
    `${result.check} check · environment ${environment.name} · ${environment.baseUrl}`,
  ];
  for (const step of result.steps) {
    const ok = step.error === null;
    const status = step.statusCode === null ? '---' : String(step.statusCode);
    lines.push(
      `  ${ok ? 'ok  ' : 'FAIL'} ${step.name.padEnd(14)} ${(step.method ?? '').padEnd(6)} ${(step.path ?? '').padEnd(40)} ${status}  ${formatMs(step.durationMs).padStart(9)}` +
        (step.error ? `  ${step.error}` : '') +
        (step.requestId ? `  request_id=${step.requestId}` : ''),
    );
  }
  const facts = [
    result.reason ? `reason ${result.reason}` : null,
    ...check.trace(result.facts),
    ...result.contractChecks
      .filter((c) => c.result !== 'pass')
      .map((c) => `contract ${c.check} ${c.result}`),
  ].filter((f) => f !== null);
  lines.push(
    `${result.outcome === 'pass' ? 'PASS' : 'FAIL'} in ${formatMs(result.durationMs)}` +
      (facts.length > 0 ? ` · ${facts.join(' · ')}` : ''),
  );
  return lines.join('\n');
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}
