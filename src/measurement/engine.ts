/**
 * The measurement engine: session ledger, environments and scheduler, reporting everything it does
 * as MeasurementEvents. It runs in a worker thread in the daemon, so that work on the main thread
 * (serving /metrics, logging) cannot delay a probe or its timestamps; `inline` mode runs it on the
 * calling thread for benchmarks and tests.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  createsSessions,
  providerListOperations,
  responseSchemasOf,
  type AnyCheck,
  type CheckLogger,
} from '../kernel/check.js';
import { responseSpecs } from '../api/response-schemas.js';
import { watchCallsInFlight } from '../api/client.js';
import { withFields } from '../kernel/logger.js';
import { startControlProbe } from '../control/probe.js';
import { EnvironmentRuntime } from '../environment.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { SessionLedger, type CreateIntent } from '../sessions/ledger.js';
import { closeRemovedSessions } from '../sessions/removed.js';
import { UNRECOVERABLE_MESSAGE, unrecoverableFields } from '../sessions/unrecoverable.js';
import { startLagSampler } from './lag.js';
import { openDriftWatch, type DriftWatch } from './drift-watch.js';
import { Retirement } from './retirement.js';
import type { EnvironmentConfig, MonitorConfig } from '../config/index.js';
import {
  plainFields,
  type LogLevel,
  type MeasurementEvent,
  type MeasurementInit,
  type ReloadReport,
} from './messages.js';

export interface MeasurementEngine {
  /**
   * Applies a new configuration's environments (docs/configuration.md, "Reload"): added ones are
   * scheduled, removed ones stop and their open sessions are still closed, changed ones get a new
   * runtime that keeps the old one's Retry-After gate, budget and schedule offsets. Runs in flight
   * finish under the settings they started with. The rest of `config` is the caller's to refuse.
   */
  reload(config: MonitorConfig): ReloadReport;
  stop(graceMs: number): Promise<void>;
}

export { RETIRED_SWEEP_INTERVAL_MS } from './retirement.js';

export interface EngineOptions {
  /** The checks of this build, from the composition root (`checks/index.ts`). */
  checks: readonly AnyCheck[];
  /** Called just before each scheduled run (the worker collects its young generation). */
  prepareRun?: () => void;
}

/**
 * Opens the ledger, checks that it can be written, starts the schedules, and only then, in the
 * background, closes what a previous process left open: start-up never waits for the API (a
 * sweep may meet a long Retry-After), so readiness and pings do not either.
 */
export async function startEngine(
  init: MeasurementInit,
  emit: (event: MeasurementEvent) => void,
  options: EngineOptions,
): Promise<MeasurementEngine> {
  const { checks } = options;
  const log = eventLogger(emit);
  const ledger = await openLedger(init.config.stateFile, emit, log);
  const drift = await openDriftWatch({
    stateFile: init.config.stateFile,
    environments: namesOf(init.config.environments),
    emit,
    log,
    specOf: responseSpecs(responseSchemasOf(checks)),
    providerLists: providerListOperations(checks),
  });
  const lag = startLagSampler({ report: (samplesMs) => emit({ type: 'lag', samplesMs }) });
  // Lag samples while an API call is in flight, none between calls (measurement/lag.ts).
  const stopWatchingCalls = watchCallsInFlight(() => lag.begin());
  const runtimeOf = environmentRuntimeFactory(init, { checks, ledger, log, emit, drift });
  const environments = init.config.environments.map((config) => runtimeOf(config));
  emit({ type: 'ledger_writable', writable: true });
  try {
    await ledger.checkWritable();
  } catch {
    // Reported by the ledger's listener; pings go on, lifecycle runs wait for a writable ledger.
  }
  for (const env of environments) announceSessions({ checks, ledger, emit }, env);
  const engine: EngineParts = {
    checks,
    ledger,
    log,
    emit,
    drift,
    runtimeOf,
    // `environments` stays the start-up list.
    current: new Map(environments.map((env) => [env.name, env])),
    scheduler: createScheduler(environments, { checks, log, emit, prepareRun: options.prepareRun }),
    retirement: new Retirement(ledger),
    stopSweep: new AbortController(),
    sweeps: [],
  };
  engine.scheduler.start();
  const control = init.config.control
    ? startControlProbe({
        config: init.config.control,
        userAgent: init.userAgent,
        report: ({ result, durationMs }) => emit({ type: 'control', result, durationMs }),
      })
    : null;
  emit({ type: 'ready', schedule: engine.scheduler.schedule, leftoverSessions: 0 });
  engine.sweeps.push(sweepAtStart(engine, environments, init.userAgent));
  return {
    reload: (config) => reloadEnvironments(engine, config),
    async stop(graceMs: number) {
      stopWatchingCalls();
      lag.stop();
      await control?.stop();
      await stopEnvironments(engine, graceMs);
    },
  };
}

const namesOf = (list: readonly EnvironmentConfig[]): string[] => list.map((env) => env.name);

/** What the engine's start, reload and stop share. */
interface EngineParts {
  checks: readonly AnyCheck[];
  ledger: SessionLedger;
  log: CheckLogger;
  emit: (event: MeasurementEvent) => void;
  /** Every response's shape against its baseline (docs/drift.md). */
  drift: DriftWatch;
  /** A new runtime for an environment, taking over from its predecessor's if it had one. */
  runtimeOf: RuntimeFactory;
  /** The environments scheduled now, by name. */
  current: Map<string, EnvironmentRuntime>;
  scheduler: Scheduler;
  /** Runtimes a reload replaced or removed, until they are done. */
  retirement: Retirement;
  /** Stops the background sweeps of leftovers at shutdown. */
  stopSweep: AbortController;
  sweeps: Promise<void>[];
}

type RuntimeFactory = (
  config: EnvironmentConfig,
  predecessor?: EnvironmentRuntime,
) => EnvironmentRuntime;

/** Opens the session ledger and reports its open sessions and its writability as events. */
async function openLedger(
  stateFile: string,
  emit: (event: MeasurementEvent) => void,
  log: CheckLogger,
): Promise<SessionLedger> {
  const ledger = await SessionLedger.open(stateFile);
  ledger.onChange((environment, count) => emit({ type: 'sessions_open', environment, count }));
  ledger.onWritableChange((writable, err) => {
    emit({ type: 'ledger_writable', writable });
    if (writable) log.info({ stateFile: ledger.path }, 'the session ledger is writable again');
    else
      log.error(
        { err, stateFile: ledger.path },
        'cannot write the session ledger; lifecycle runs are skipped until it can be written',
      );
  });
  return ledger;
}

/** How the engine builds an environment's runtime: its client, budget, gate and ledger view. */
function environmentRuntimeFactory(
  init: MeasurementInit,
  parts: Pick<EngineParts, 'checks' | 'ledger' | 'log' | 'emit' | 'drift'>,
): RuntimeFactory {
  const onUnrecoverable = (intent: CreateIntent): void => {
    parts.emit({ type: 'session_unrecoverable', environment: intent.environment });
    parts.log.error(unrecoverableFields(intent), UNRECOVERABLE_MESSAGE);
  };
  return (config, predecessor) =>
    new EnvironmentRuntime(config, {
      checks: parts.checks,
      ledger: parts.ledger,
      userAgent: init.userAgent,
      log: withFields(parts.log, { environment: config.name }),
      onUnrecoverable,
      onResponse: (response) => parts.drift.observe(config.name, response),
      ...(predecessor ? { predecessor } : {}),
    });
}

/** The scheduler of the environments, reporting its runs, skips and follow-ups as events. */
function createScheduler(
  environments: EnvironmentRuntime[],
  parts: Pick<EngineParts, 'checks' | 'log' | 'emit'> & { prepareRun: (() => void) | undefined },
): Scheduler {
  const { emit } = parts;
  return new Scheduler({
    environments,
    checks: parts.checks,
    log: parts.log,
    onResult: (result) => emit({ type: 'result', result }),
    onSkip: (environment, check, reason) => emit({ type: 'skip', environment, check, reason }),
    onAbandon: (environment, check) => emit({ type: 'abandoned', environment, check }),
    onFollowUp: (environment, check, event) =>
      emit({ type: 'follow_up', environment, check, event }),
    ...(parts.prepareRun ? { prepare: parts.prepareRun } : {}),
  });
}

/**
 * Reports the open sessions of an environment that can have sessions: where a check creates them,
 * and where the ledger held sessions or create intents at start-up (an earlier configuration's,
 * closed or reported by the sweep). Only these carry the session metrics (docs/metrics.md).
 */
function announceSessions(
  engine: Pick<EngineParts, 'checks' | 'ledger' | 'emit'>,
  env: EnvironmentRuntime,
): void {
  const enabled = engine.checks.filter((check) => env.section(check).enabled);
  if (createsSessions(enabled) || engine.ledger.namedAtOpen.has(env.name))
    engine.emit({
      type: 'sessions_open',
      environment: env.name,
      count: engine.ledger.count(env.name),
    });
}

/**
 * The start-up sweep: what dead processes left of the configured environments, then what is left
 * of environments no longer configured.
 */
async function sweepAtStart(
  engine: EngineParts,
  environments: EnvironmentRuntime[],
  userAgent: string,
): Promise<void> {
  const { ledger, log, stopSweep } = engine;
  await sweepLeftovers(environments, ledger, log, stopSweep.signal);
  await closeRemovedSessions({
    ledger,
    configured: [...engine.current.values()].map((env) => env.config),
    userAgent,
    log,
    signal: stopSweep.signal,
  });
}

/** `MeasurementEngine.reload`: the environments of `config` in force, reported by name. */
function reloadEnvironments(engine: EngineParts, config: MonitorConfig): ReloadReport {
  const report: ReloadReport = { added: [], changed: [], removed: [], unchanged: [], schedule: [] };
  const { scheduler, current } = engine;
  const keep = new Map(
    scheduler.schedule.map((task) => [`${task.environment}/${task.check}`, task]),
  );
  removeEnvironments(engine, new Set(config.environments.map((env) => env.name)), report);
  const scheduled: EnvironmentRuntime[] = [];
  const next = new Map<string, EnvironmentRuntime>();
  for (const envConfig of config.environments) {
    const runtime = runtimeAfterReload(engine, envConfig, report);
    next.set(envConfig.name, runtime);
    if (runtime !== current.get(envConfig.name)) scheduled.push(runtime);
  }
  current.clear();
  for (const [name, runtime] of next) current.set(name, runtime);
  scheduler.add(scheduled, keep);
  const added = scheduled.filter((env) => report.added.includes(env.name));
  for (const env of added) announceSessions(engine, env);
  // What an earlier configuration left of an added environment's sessions is closed too.
  if (added.length > 0)
    engine.sweeps.push(sweepLeftovers(added, engine.ledger, engine.log, engine.stopSweep.signal));
  report.schedule = scheduler.schedule;
  engine.drift.setEnvironments(namesOf(config.environments));
  return report;
}

/** Stops the environments a reload leaves out; their open sessions are still closed. */
function removeEnvironments(
  engine: EngineParts,
  wanted: ReadonlySet<string>,
  report: ReloadReport,
): void {
  for (const [name, runtime] of engine.current) {
    if (wanted.has(name)) continue;
    report.removed.push(name);
    engine.current.delete(name);
    engine.retirement.retire(runtime, engine.scheduler.remove(name), true);
    // Its series outlives the reload while the ledger holds its sessions (docs/metrics.md).
    const open = engine.ledger.count(name);
    if (open > 0) engine.emit({ type: 'sessions_open', environment: name, count: open });
  }
}

/**
 * The runtime of a configured environment after a reload: the running one when its configuration
 * is unchanged, else a new one that takes over from the running or retired one of its name.
 */
function runtimeAfterReload(
  engine: EngineParts,
  envConfig: EnvironmentConfig,
  report: ReloadReport,
): EnvironmentRuntime {
  const running = engine.current.get(envConfig.name);
  if (running !== undefined && isDeepStrictEqual(running.config, envConfig)) {
    report.unchanged.push(envConfig.name);
    return running;
  }
  // An environment removed by an earlier reload and back now: its sweep stops, and the
  // new runtime, of the same name, carries on closing what it left.
  const leaving = engine.retirement.reclaim(envConfig.name);
  const predecessor = running ?? leaving;
  const runtime = engine.runtimeOf(envConfig, predecessor);
  if (running !== undefined) {
    report.changed.push(envConfig.name);
    engine.retirement.retire(running, engine.scheduler.remove(envConfig.name), false);
  } else {
    report.added.push(envConfig.name);
  }
  return runtime;
}

/** `MeasurementEngine.stop`'s part for the environments: sweeps, runs, retirements, the ledger. */
async function stopEnvironments(engine: EngineParts, graceMs: number): Promise<void> {
  engine.stopSweep.abort();
  await Promise.all(engine.sweeps);
  engine.retirement.shuttingDown();
  await engine.scheduler.stop(graceMs);
  await engine.retirement.finish();
  await Promise.all([...engine.current.values()].map((env) => env.close()));
  engine.ledger.close();
  await engine.drift.close();
  reportOpenAtExit(engine.ledger, engine.log);
}

/**
 * One line per environment whose sessions are still open at exit, under its own name. The next
 * start closes them, those of an environment no longer configured too when their entries recorded
 * an address and a key it can find (sessions/removed.ts).
 */
function reportOpenAtExit(ledger: SessionLedger, log: CheckLogger): void {
  const counts = new Map<string, number>();
  for (const { environment } of ledger.list())
    counts.set(environment, (counts.get(environment) ?? 0) + 1);
  for (const [environment, sessions] of counts) {
    log.warn(
      { environment, sessions },
      'synthetic sessions still open at exit; the next start closes them',
    );
  }
}

/** The start-up sweep, in the background: adopt what dead processes left and close it. */
async function sweepLeftovers(
  environments: EnvironmentRuntime[],
  ledger: SessionLedger,
  log: CheckLogger,
  signal: AbortSignal,
): Promise<void> {
  await Promise.all(environments.map((env) => env.reaper.sweep({ force: true, signal })));
  // Those of environments no longer configured are closed next, and reported on their own.
  const names = new Set(environments.map((env) => env.name));
  const leftovers = ledger.list().filter((entry) => names.has(entry.environment)).length;
  if (leftovers > 0) {
    log.warn(
      { sessions: leftovers },
      'synthetic sessions left open by a previous run are not closed yet; retrying in the background',
    );
  }
}

function eventLogger(emit: (event: MeasurementEvent) => void): CheckLogger {
  const at =
    (level: LogLevel) =>
    (fields: object, msg: string): void =>
      emit({ type: 'log', level, fields: plainFields(fields), msg });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
