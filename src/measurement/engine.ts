/**
 * The measurement engine: session ledger, environments and scheduler, reporting everything it does
 * as MeasurementEvents. It runs in a worker thread in the daemon, so that work on the main thread
 * (serving /metrics, logging) cannot delay a probe or its timestamps; `inline` mode runs it on the
 * calling thread for benchmarks and tests.
 */
import type { CheckLogger } from '../checks/check.js';
import { CHECK_LIST } from '../checks/index.js';
import { withFields } from '../checks/logger.js';
import { EnvironmentRuntime } from '../environment.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { SessionLedger } from '../sessions/ledger.js';
import { startLagSampler } from './lag.js';
import {
  plainFields,
  type LogLevel,
  type MeasurementEvent,
  type MeasurementInit,
} from './messages.js';

export interface MeasurementEngine {
  stop(graceMs: number): Promise<void>;
}

/** Opens the ledger, closes what a previous process left open, then starts the schedules. */
export async function startEngine(
  init: MeasurementInit,
  emit: (event: MeasurementEvent) => void,
): Promise<MeasurementEngine> {
  const log = eventLogger(emit);
  const ledger = await SessionLedger.open(init.config.stateFile);
  ledger.onChange((environment, count) => emit({ type: 'sessions_open', environment, count }));

  const environments = init.config.environments.map(
    (config) =>
      new EnvironmentRuntime(config, {
        ledger,
        userAgent: init.userAgent,
        log: withFields(log, { environment: config.name }),
      }),
  );
  for (const env of environments)
    emit({ type: 'sessions_open', environment: env.name, count: ledger.count(env.name) });

  const leftovers = ledger.list().length;
  if (leftovers > 0) {
    log.warn({ sessions: leftovers }, 'closing synthetic sessions left open by a previous run');
    await Promise.all(environments.map((env) => env.reaper.sweep({ force: true })));
  }
  const unknown = ledger
    .list()
    .filter((e) => !environments.some((env) => env.name === e.environment));
  if (unknown.length > 0) {
    log.warn(
      { environments: [...new Set(unknown.map((e) => e.environment))] },
      'the session ledger lists sessions of environments no longer configured; they stay listed',
    );
  }

  const scheduler = new Scheduler({
    environments,
    checks: CHECK_LIST,
    log,
    onResult: (result) => emit({ type: 'result', result }),
    onSkip: (environment, check, reason) => emit({ type: 'skip', environment, check, reason }),
  });
  scheduler.start();
  const lag = startLagSampler({ report: (samplesMs) => emit({ type: 'lag', samplesMs }) });
  emit({ type: 'ready', schedule: scheduler.schedule, leftoverSessions: ledger.list().length });

  return {
    async stop(graceMs: number) {
      lag.stop();
      await scheduler.stop(graceMs);
      await Promise.all(environments.map((env) => env.close()));
      const open = ledger.list().length;
      if (open > 0)
        log.warn(
          { sessions: open },
          'synthetic sessions still open at exit; the next start closes them',
        );
    },
  };
}

function eventLogger(emit: (event: MeasurementEvent) => void): CheckLogger {
  const at =
    (level: LogLevel) =>
    (fields: object, msg: string): void =>
      emit({ type: 'log', level, fields: plainFields(fields), msg });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
