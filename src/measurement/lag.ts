/**
 * Event-loop lag of the measurement thread, cheaply. A ping is timed on this thread's event loop,
 * so when this loop is late (CPU starvation, GC), so are the measurements; that is what the lag
 * signal is for. The sampler asks for a timer and records how much later than asked it fired.
 *
 * It samples only where the signal matters: every `busyIntervalMs` (50 ms) through a busy spell,
 * and not at all otherwise. The engine makes a spell of each stretch with an API call in flight
 * (`watchCallsInFlight`, api/client.ts): the moments a request is timed. A spell that begins
 * arms the first timer, so every spell gets at least one sample, within 50 ms of its start (a
 * call shorter than that is sampled just after it). Samples at rest described moments nobody
 * measured, and their wake-ups were a third of the idle daemon's CPU (bench/LOG.md, "Idle");
 * samples through a lifecycle run's budget waits, between its calls, were some 60 wake-ups a run
 * for the same nothing (bench/LOG.md, "Lag samples only around calls").
 *
 * The samples go to the main thread in batches: one when a busy spell ends (with its last
 * sample), and during a long spell (a call with a long deadline) at most one every
 * `reportEveryMs`.
 */

export interface LagSamplerOptions {
  /** Time between samples through a busy spell; default 50 ms. */
  busyIntervalMs?: number;
  /** Least time between batches handed to `report` during a busy spell; default 15 s. */
  reportEveryMs?: number;
  /** Receives the samples (ms late, ≥ 0) taken since the last batch. */
  report: (samplesMs: number[]) => void;
  /** Monotonic clock in ms. */
  now?: () => number;
}

export interface LagSampler {
  /**
   * A busy spell starts (spells may overlap): sample every `busyIntervalMs` until every spell has
   * ended. Call the result at its end.
   */
  begin(): () => void;
  stop(): void;
}

/** A sampler with no timer until the first spell; its timers never keep the process alive. */
export function startLagSampler(opts: LagSamplerOptions): LagSampler {
  const busyIntervalMs = opts.busyIntervalMs ?? 50;
  const reportEveryMs = opts.reportEveryMs ?? 15_000;
  const now = opts.now ?? (() => performance.now());
  let samples: number[] = [];
  /** When the samples in `samples` began: the spell's start, or the last batch during it. */
  let batchStart = 0;
  let timer: NodeJS.Timeout | undefined;
  let spells = 0;
  let stopped = false;

  const flush = (at: number): void => {
    const batch = samples;
    samples = [];
    batchStart = at;
    opts.report(batch);
  };
  const arm = (): void => {
    const askedAt = now();
    timer = setTimeout(() => {
      const firedAt = now();
      samples.push(Math.max(0, firedAt - askedAt - busyIntervalMs));
      if (spells > 0) {
        if (firedAt - batchStart >= reportEveryMs) flush(firedAt);
        arm();
      } else {
        // The spell is over: its samples go now, and the thread sleeps until the next one.
        timer = undefined;
        flush(firedAt);
      }
    }, busyIntervalMs);
    timer.unref();
  };
  return {
    begin() {
      spells += 1;
      if (!stopped && timer === undefined) {
        batchStart = now();
        arm();
      }
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        spells -= 1;
      };
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
