/**
 * Event-loop lag of the measurement thread, cheaply. A ping is timed on this thread's event loop,
 * so when this loop is late (CPU starvation, GC), so are the measurements; that is what the lag
 * signal is for. The sampler asks for a timer and records how much later than asked it fired.
 *
 * It samples where the signal matters and sleeps where it does not: every `busyIntervalMs` (50 ms)
 * while a check run is in flight, and every `restIntervalMs` (15 s) otherwise. A run that starts
 * at rest replaces the rest timer by a busy one, so every run gets at least one sample, taken
 * within 50 ms of its start. At the default schedule (two pings a minute) a 1 s sampler was the
 * largest part of the daemon's rest cost: 60 wake-ups a minute against some 6 now
 * (bench/README.md, "Default schedule"). The samples go to the main thread in batches, at most
 * one message every `reportEveryMs` (and at rest, one with each rest sample).
 */

export interface LagSamplerOptions {
  /** Time between samples while a check run is in flight; default 50 ms. */
  busyIntervalMs?: number;
  /** Time between samples while no run is in flight; default 15 s. */
  restIntervalMs?: number;
  /** Least time between batches handed to `report`; default 15 s (a typical scrape interval). */
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

/** Starts sampling; the timers never keep the process alive. */
export function startLagSampler(opts: LagSamplerOptions): LagSampler {
  const busyIntervalMs = opts.busyIntervalMs ?? 50;
  const restIntervalMs = opts.restIntervalMs ?? 15_000;
  const reportEveryMs = opts.reportEveryMs ?? 15_000;
  const now = opts.now ?? (() => performance.now());
  let samples: number[] = [];
  let lastReport = now();
  let timer: NodeJS.Timeout | undefined;
  /** The delay the pending timer was asked for. */
  let armedMs = 0;
  let runs = 0;
  let stopped = false;

  const arm = (delayMs: number): void => {
    const askedAt = now();
    armedMs = delayMs;
    timer = setTimeout(() => {
      const firedAt = now();
      samples.push(Math.max(0, firedAt - askedAt - delayMs));
      if (firedAt - lastReport >= reportEveryMs) {
        const batch = samples;
        samples = [];
        lastReport = firedAt;
        opts.report(batch);
      }
      arm(runs > 0 ? busyIntervalMs : restIntervalMs);
    }, delayMs);
    timer.unref();
  };
  arm(restIntervalMs);
  return {
    begin() {
      runs += 1;
      if (!stopped && armedMs !== busyIntervalMs) {
        // The rest timer is dropped unsampled: only a timer that ran its full delay says how
        // late the loop was.
        clearTimeout(timer);
        arm(busyIntervalMs);
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
