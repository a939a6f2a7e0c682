/**
 * Event-loop lag of the measurement thread, cheaply. A ping is timed on this thread's event loop,
 * so when this loop is late (CPU starvation, GC), so are the measurements; that is what the lag
 * signal is for. prom-client's monitor (`monitorEventLoopDelay`) wakes its thread every 10 ms,
 * about 8 ms of CPU a second on an idle daemon; this sampler wakes once a second: it asks for a
 * timer and records how much later than asked it fired. The samples go to the main thread in
 * batches, so an idle daemon exchanges one message every `reportEveryMs`.
 */

export interface LagSamplerOptions {
  /** Time between samples; default 1 s. */
  intervalMs?: number;
  /** Time between batches handed to `report`; default 15 s (a typical scrape interval). */
  reportEveryMs?: number;
  /** Receives the samples (ms late, ≥ 0) taken since the last batch. */
  report: (samplesMs: number[]) => void;
  /** Monotonic clock in ms. */
  now?: () => number;
}

export interface LagSampler {
  stop(): void;
}

/** Starts sampling; the timers never keep the process alive. */
export function startLagSampler(opts: LagSamplerOptions): LagSampler {
  const intervalMs = opts.intervalMs ?? 1_000;
  const reportEveryMs = opts.reportEveryMs ?? 15_000;
  const now = opts.now ?? (() => performance.now());
  let samples: number[] = [];
  let lastReport = now();
  let timer: NodeJS.Timeout | undefined;

  const arm = (): void => {
    const askedAt = now();
    timer = setTimeout(() => {
      const firedAt = now();
      samples.push(Math.max(0, firedAt - askedAt - intervalMs));
      if (firedAt - lastReport >= reportEveryMs) {
        const batch = samples;
        samples = [];
        lastReport = firedAt;
        opts.report(batch);
      }
      arm();
    }, intervalMs);
    timer.unref();
  };
  arm();
  return {
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
