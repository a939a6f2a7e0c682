/**
 * The environment runtimes a reload replaced or removed (docs/configuration.md, "Reload"): each
 * finishes its runs, a removed one keeps sweeping its open sessions until the ledger lists none,
 * and then it is closed.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { EnvironmentRuntime } from '../environment.js';
import { SHUTDOWN_SWEEP_MS } from '../scheduler/scheduler.js';
import type { SessionLedger } from '../sessions/ledger.js';

/**
 * How often the open sessions of an environment a reload removed are swept again, until the
 * ledger lists none of them.
 */
export const RETIRED_SWEEP_INTERVAL_MS = 30_000;

/** The runtimes on their way out, and the removed environments still closing sessions. */
export class Retirement {
  /** Runtimes a reload replaced or removed, until their runs are done and they are closed. */
  readonly #retiring = new Set<Promise<void>>();
  /** Removed environments whose sessions are still being closed, by name. */
  readonly #retired = new Map<string, { runtime: EnvironmentRuntime; stop: AbortController }>();
  #shuttingDown = false;

  constructor(private readonly ledger: SessionLedger) {}

  /**
   * Closes `runtime` once `runsDone` resolves; a `removed` one first sweeps its sessions (a
   * changed one's successor, of the same name, sweeps them).
   */
  retire(runtime: EnvironmentRuntime, runsDone: Promise<void>, removed: boolean): void {
    const stop = new AbortController();
    if (removed) this.#retired.set(runtime.name, { runtime, stop });
    const done = (async () => {
      await runsDone;
      if (removed) await this.#sweepRemoved(runtime, stop.signal);
      if (this.#retired.get(runtime.name)?.runtime === runtime) this.#retired.delete(runtime.name);
      await runtime.close();
    })();
    this.#retiring.add(done);
    void done.finally(() => this.#retiring.delete(done));
  }

  /**
   * A removed environment configured again: its sweep stops and its runtime is returned, for the
   * new one of the same name to carry on closing what it left. Undefined when none is retired.
   */
  reclaim(name: string): EnvironmentRuntime | undefined {
    const leaving = this.#retired.get(name);
    leaving?.stop.abort();
    return leaving?.runtime;
  }

  /** From now on, a removed environment's leftovers get the shutdown's last sweep. */
  shuttingDown(): void {
    this.#shuttingDown = true;
  }

  /** Stops the removed environments' sweeps and waits until every retiring runtime is closed. */
  async finish(): Promise<void> {
    for (const { stop } of this.#retired.values()) stop.abort();
    await Promise.all(this.#retiring);
  }

  /** A removed environment's sessions are swept by its own runtime until the ledger lists none. */
  async #sweepRemoved(runtime: EnvironmentRuntime, signal: AbortSignal): Promise<void> {
    const { ledger } = this;
    while (!signal.aborted && ledger.count(runtime.name) > 0) {
      const bound = AbortSignal.any([signal, AbortSignal.timeout(runtime.sweepTimeoutMs())]);
      await runtime.reaper.sweep({ force: true, signal: bound }).catch(() => {});
      if (ledger.count(runtime.name) === 0) break;
      await delay(RETIRED_SWEEP_INTERVAL_MS, undefined, { signal }).catch(() => {});
    }
    // At shutdown, what is left gets the same last sweep as every other environment's.
    if (this.#shuttingDown && ledger.count(runtime.name) > 0) {
      const last = AbortSignal.timeout(SHUTDOWN_SWEEP_MS);
      await runtime.reaper.sweep({ force: true, signal: last }).catch(() => {});
    }
  }
}
