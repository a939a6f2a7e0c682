/**
 * The measurement engine: session ledger, environments and scheduler, reporting everything it does
 * as MeasurementEvents. It runs in a worker thread in the daemon, so that work on the main thread
 * (serving /metrics, logging) cannot delay a probe or its timestamps; `inline` mode runs it on the
 * calling thread for benchmarks and tests.
 */
import { isDeepStrictEqual } from 'node:util';
import { createsSessions, type AnyCheck, type CheckLogger } from '../kernel/check.js';
import { watchCallsInFlight } from '../api/client.js';
import { withFields } from '../kernel/logger.js';
import { startControlProbe } from '../control/probe.js';
import { EnvironmentRuntime } from '../environment.js';
import { setTimeout as delay } from 'node:timers/promises';
import { SHUTDOWN_SWEEP_MS, Scheduler } from '../scheduler/scheduler.js';
import { SessionLedger, type CreateIntent } from '../sessions/ledger.js';
import { closeRemovedSessions } from '../sessions/removed.js';
import { UNRECOVERABLE_MESSAGE, unrecoverableFields } from '../sessions/unrecoverable.js';
import { startLagSampler } from './lag.js';
import { openDriftWatch } from './drift-watch.js';
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

/**
 * How often the open sessions of an environment a reload removed are swept again, until the
 * ledger lists none of them.
 */
export const RETIRED_SWEEP_INTERVAL_MS = 30_000;

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
  const ledger = await SessionLedger.open(init.config.stateFile);
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
  const onUnrecoverable = (intent: CreateIntent): void => {
    emit({ type: 'session_unrecoverable', environment: intent.environment });
    log.error(unrecoverableFields(intent), UNRECOVERABLE_MESSAGE);
  };

  const names = (list: readonly EnvironmentConfig[]) => list.map((env) => env.name);
  const drift = await openDriftWatch({
    stateFile: init.config.stateFile,
    environments: names(init.config.environments),
    emit,
    log,
  });
  const lag = startLagSampler({ report: (samplesMs) => emit({ type: 'lag', samplesMs }) });
  // Lag samples while an API call is in flight, none between calls (measurement/lag.ts).
  const stopWatchingCalls = watchCallsInFlight(() => lag.begin());
  const runtimeOf = (config: EnvironmentConfig, predecessor?: EnvironmentRuntime) =>
    new EnvironmentRuntime(config, {
      checks,
      ledger,
      userAgent: init.userAgent,
      log: withFields(log, { environment: config.name }),
      onUnrecoverable,
      onResponse: (response) => drift.observe(config.name, response),
      ...(predecessor ? { predecessor } : {}),
    });
  const environments = init.config.environments.map((config) => runtimeOf(config));
  /** The environments scheduled now, by name; `environments` stays the start-up list. */
  const current = new Map(environments.map((env) => [env.name, env]));
  emit({ type: 'ledger_writable', writable: true });
  try {
    await ledger.checkWritable();
  } catch {
    // Reported by the listener above; pings go on, lifecycle runs wait for a writable ledger.
  }
  // The environments that can have sessions: where a check creates them, and where the ledger
  // held sessions or create intents at start-up (an earlier configuration's, closed or reported
  // by the sweep below). Only these carry the session metrics (docs/metrics.md).
  const announceSessions = (env: EnvironmentRuntime): void => {
    const enabled = checks.filter((check) => env.section(check).enabled);
    if (createsSessions(enabled) || ledger.namedAtOpen.has(env.name))
      emit({ type: 'sessions_open', environment: env.name, count: ledger.count(env.name) });
  };
  for (const env of environments) announceSessions(env);

  const scheduler = new Scheduler({
    environments,
    checks,
    log,
    onResult: (result) => emit({ type: 'result', result }),
    onSkip: (environment, check, reason) => emit({ type: 'skip', environment, check, reason }),
    onAbandon: (environment, check) => emit({ type: 'abandoned', environment, check }),
    onFollowUp: (environment, check, event) =>
      emit({ type: 'follow_up', environment, check, event }),
    ...(options.prepareRun ? { prepare: options.prepareRun } : {}),
  });
  scheduler.start();
  const control = init.config.control
    ? startControlProbe({
        config: init.config.control,
        userAgent: init.userAgent,
        report: ({ result, durationMs }) => emit({ type: 'control', result, durationMs }),
      })
    : null;
  emit({ type: 'ready', schedule: scheduler.schedule, leftoverSessions: 0 });

  const stopSweep = new AbortController();
  const sweeps = [
    sweepLeftovers(environments, ledger, log, stopSweep.signal).then(() =>
      closeRemovedSessions({
        ledger,
        configured: [...current.values()].map((env) => env.config),
        userAgent: init.userAgent,
        log,
        signal: stopSweep.signal,
      }),
    ),
  ];
  /** Runtimes a reload replaced or removed, until their runs are done and they are closed. */
  const retiring = new Set<Promise<void>>();
  /** Removed environments whose sessions are still being closed, by name. */
  const retired = new Map<string, { runtime: EnvironmentRuntime; stop: AbortController }>();
  let shuttingDown = false;
  const retire = (runtime: EnvironmentRuntime, runsDone: Promise<void>, removed: boolean): void => {
    const stop = new AbortController();
    if (removed) retired.set(runtime.name, { runtime, stop });
    const done = (async () => {
      await runsDone;
      // A removed environment's sessions are still closed: its own runtime sweeps them until
      // the ledger lists none (a changed one's successor, of the same name, sweeps them).
      while (removed && !stop.signal.aborted && ledger.count(runtime.name) > 0) {
        const bound = AbortSignal.any([stop.signal, AbortSignal.timeout(runtime.sweepTimeoutMs())]);
        await runtime.reaper.sweep({ force: true, signal: bound }).catch(() => {});
        if (ledger.count(runtime.name) === 0) break;
        await delay(RETIRED_SWEEP_INTERVAL_MS, undefined, { signal: stop.signal }).catch(() => {});
      }
      // At shutdown, what is left gets the same last sweep as every other environment's.
      if (removed && shuttingDown && ledger.count(runtime.name) > 0) {
        const last = AbortSignal.timeout(SHUTDOWN_SWEEP_MS);
        await runtime.reaper.sweep({ force: true, signal: last }).catch(() => {});
      }
      if (retired.get(runtime.name)?.runtime === runtime) retired.delete(runtime.name);
      await runtime.close();
    })();
    retiring.add(done);
    void done.finally(() => retiring.delete(done));
  };

  return {
    reload(config: MonitorConfig): ReloadReport {
      const report: ReloadReport = {
        added: [],
        changed: [],
        removed: [],
        unchanged: [],
        schedule: [],
      };
      const keep = new Map(
        scheduler.schedule.map((task) => [`${task.environment}/${task.check}`, task]),
      );
      const wanted = new Set(config.environments.map((env) => env.name));
      for (const [name, runtime] of current) {
        if (wanted.has(name)) continue;
        report.removed.push(name);
        current.delete(name);
        retire(runtime, scheduler.remove(name), true);
        // Its series outlives the reload while the ledger holds its sessions (docs/metrics.md).
        const open = ledger.count(name);
        if (open > 0) emit({ type: 'sessions_open', environment: name, count: open });
      }
      const scheduled: EnvironmentRuntime[] = [];
      const next = new Map<string, EnvironmentRuntime>();
      for (const envConfig of config.environments) {
        const running = current.get(envConfig.name);
        if (running !== undefined && isDeepStrictEqual(running.config, envConfig)) {
          report.unchanged.push(envConfig.name);
          next.set(envConfig.name, running);
          continue;
        }
        // An environment removed by an earlier reload and back now: its sweep stops, and the
        // new runtime, of the same name, carries on closing what it left.
        const leaving = retired.get(envConfig.name);
        leaving?.stop.abort();
        const predecessor = running ?? leaving?.runtime;
        const runtime = runtimeOf(envConfig, predecessor);
        if (running !== undefined) {
          report.changed.push(envConfig.name);
          retire(running, scheduler.remove(envConfig.name), false);
        } else {
          report.added.push(envConfig.name);
        }
        next.set(envConfig.name, runtime);
        scheduled.push(runtime);
      }
      current.clear();
      for (const [name, runtime] of next) current.set(name, runtime);
      scheduler.add(scheduled, keep);
      for (const env of scheduled) {
        if (report.added.includes(env.name)) announceSessions(env);
      }
      // What an earlier configuration left of an added environment's sessions is closed too.
      const added = scheduled.filter((env) => report.added.includes(env.name));
      if (added.length > 0) sweeps.push(sweepLeftovers(added, ledger, log, stopSweep.signal));
      report.schedule = scheduler.schedule;
      drift.setEnvironments(names(config.environments));
      return report;
    },
    async stop(graceMs: number) {
      stopWatchingCalls();
      lag.stop();
      await control?.stop();
      stopSweep.abort();
      await Promise.all(sweeps);
      shuttingDown = true;
      await scheduler.stop(graceMs);
      for (const { stop } of retired.values()) stop.abort();
      await Promise.all(retiring);
      await Promise.all([...current.values()].map((env) => env.close()));
      ledger.close();
      await drift.close();
      reportOpenAtExit(ledger, log);
    },
  };
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
