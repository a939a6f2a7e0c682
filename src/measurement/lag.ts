/**
 * Event-loop lag of the measurement thread, cheaply. A ping is timed on this thread's event loop,
 * so when this loop is late (CPU starvation, GC), so are the measurements; that is what the lag
 * signal is for. The sampler asks for a timer and records how much later than asked it fired.
 *
 * It samples only where the signal matters: every `busyIntervalMs` (50 ms) while a check run is
 * in flight, and not at all otherwise. A run that starts with no run in flight arms the first
 * timer, so every run gets at least one sample, taken within 50 ms of its start (a run shorter
 * than that is sampled just after it). Samples at rest described moments nobody measured, and
 * their wake-ups were a third of the idle daemon's CPU (bench/README.md, "Idle").
 *
 * The samples go to the main thread in batches: one when a busy spell ends (with its last
 * sample), and during a long spell (a lifecycle run polling for 90 s) at most one every
 * `reportEveryMs`.
 */

export interface LagSamplerOptions {
  /** Time between samples while a check run is in flight; default 50 ms. */
  busyIntervalMs?: number;
  /** Least time between batches handed to `report` during a busy spell; default 15 s. */
  reportEveryMs?: number;
  /** Receives the samples (ms late, ≥ 0) taken since the last batch. */
  report: (samplesMs: number[]) => void;
  /** Monotonic clock in ms. */
  now?: () => number;
}

export interface LagSampler {
  /** A check run starts: sample every `busyIntervalMs` until it ends. Call the result at its end. */
  begin(): () => void;
  stop(): void;
}

/** A sampler with no timer until the first run; its timers never keep the process alive. */
export function startLagSampler(opts: LagSamplerOptions): LagSampler {
  const busyIntervalMs = opts.busyIntervalMs ?? 50;
  const reportEveryMs = opts.reportEveryMs ?? 15_000;
  const now = opts.now ?? (() => performance.now());
  let samples: number[] = [];
  /** When the samples in `samples` began: the spell's start, or the last batch during it. */
  let batchStart = 0;
  let timer: NodeJS.Timeout | undefined;
  let runs = 0;
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
      if (runs > 0) {
        if (firedAt - batchStart >= reportEveryMs) flush(firedAt);
        arm();
      } else {
        // The spell is over: its samples go now, and the thread sleeps until the next run.
        timer = undefined;
        flush(firedAt);
      }
    }, busyIntervalMs);
    timer.unref();
  };
  return {
    begin() {
      runs += 1;
      if (!stopped && timer === undefined) {
        batchStart = now();
        arm();
      }
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        runs -= 1;
      };
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
