/**
 * The control probe (`control`): a plain GET of a neutral URL, every `control.interval`, so that
 * the rules can tell "this location's network is broken" from "the API is broken". It is not a
 * check: it belongs to the monitor (one per location), not to an environment, and it never goes
 * through the API client, so it cannot carry the API key or any header of the API's requests.
 */
import type { ControlConfig } from '../config/index.js';
import type { ControlResult } from '../metrics/definitions.js';

export interface ControlProbeOutcome {
  result: ControlResult;
  durationMs: number;
}

export interface ControlProbeOptions {
  config: ControlConfig;
  userAgent: string;
  report: (outcome: ControlProbeOutcome) => void;
  /** Monotonic clock, ms. */
  now?: () => number;
}

/** One probe: GET the URL with only a User-Agent; any 2xx is `ok`. Never throws. */
export async function probeOnce(
  config: ControlConfig,
  userAgent: string,
  now: () => number = () => performance.now(),
): Promise<ControlProbeOutcome> {
  const start = now();
  const signal = AbortSignal.timeout(config.timeoutMs);
  let result: ControlResult;
  try {
    const response = await fetch(config.url, {
      method: 'GET',
      headers: { 'user-agent': userAgent },
      redirect: 'manual',
      signal,
    });
    // The body is not needed, and may be large: do not read it.
    await response.body?.cancel().catch(() => undefined);
    result = response.status >= 200 && response.status < 300 ? 'ok' : 'unexpected_status';
  } catch {
    result = signal.aborted ? 'timeout' : 'network_error';
  }
  return { result, durationMs: now() - start };
}

/** Probes at once, then every `control.interval`; never two at a time. Returns a stop function. */
export function startControlProbe(opts: ControlProbeOptions): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const run = (): void => {
    if (stopped) return;
    const started = (opts.now ?? (() => performance.now()))();
    running = probeOnce(opts.config, opts.userAgent, opts.now).then((outcome) => {
      if (!stopped) opts.report(outcome);
      if (stopped) return;
      // The next probe one interval after this one started (a slow probe delays, never stacks).
      const elapsed = (opts.now ?? (() => performance.now()))() - started;
      timer = setTimeout(run, Math.max(0, opts.config.intervalMs - elapsed));
    });
  };
  run();
  return {
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      await running;
    },
  };
}
