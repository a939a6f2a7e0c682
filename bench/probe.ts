/**
 * What the benchmark's two probing threads share: the paced ping loop, the samples it produces, the
 * node-cron lateness probe and the messages the worker exchanges with the main thread. The same
 * code runs on both threads, so the only difference between scenarios is where it runs.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createTask } from 'node-cron';
import type { ApiClient } from '../src/api/client.js';
import { ping } from '../src/checks/ping/request.js';

/** One measured ping, as it crosses from the worker to the main thread (plain data). */
export interface PingSample {
  /** The client's own latency: call start → body fully read, monotonic clock. */
  durationMs: number;
  /** The simulator's `Server-Timing: sim;dur=…`: request arrival → response head written. */
  serverTimingMs: number | null;
  statusCode: number | null;
  /** The ping paid for a TCP connect (no keep-alive reuse); should be 0 of every block. */
  newConnection: boolean;
  /**
   * Wall-clock window around the call (`performance.timeOrigin + performance.now()`, comparable
   * across threads), to tell which pings overlapped a main-thread busy stretch.
   */
  windowStart: number;
  windowEnd: number;
}

/** Now, in milliseconds since the epoch with sub-millisecond precision, on any thread. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/** One firing of the node-cron probe. */
export interface CronFire {
  /** The second node-cron scheduled this firing for, epoch ms. */
  scheduledAt: number;
  /** Wall clock when the callback ran minus `scheduledAt`. */
  latenessMs: number;
}

/** Pacing of the probe loop: a random gap in this range between the end of a ping and the next. */
export const PROBE_GAP_MS = { min: 20, max: 25 } as const;

/** Main thread → worker. */
export type WorkerCommand =
  | { type: 'probe'; count: number; warmup: number }
  | { type: 'cron'; fires: number }
  | { type: 'close' };

/** Worker → main thread. */
export type WorkerEvent =
  | { type: 'sample'; sample: PingSample }
  | { type: 'probe-done' }
  | { type: 'cron-fire'; fire: CronFire }
  | { type: 'cron-done' }
  | { type: 'closed' }
  | { type: 'failed'; message: string };

/** What the worker needs to build its own client. */
export interface ProbeWorkerData {
  baseUrl: string;
  apiKey: string;
}

/** The benchmark's client identity; the simulator does not care, a reader of its logs might. */
export const BENCH_USER_AGENT = 'isa-monitor-bench/1';

/**
 * Pings `count` times in a row with a jittered pause between pings, after `warmup` pings whose
 * samples are dropped (they open the keep-alive connection and warm the JIT). Sequential on
 * purpose: one request in flight, like one check of the daemon.
 */
export async function probeSeries(
  client: ApiClient,
  count: number,
  warmup: number,
  onSample: (sample: PingSample) => void,
): Promise<void> {
  for (let i = 0; i < warmup + count; i++) {
    const windowStart = epochNow();
    const response = await ping(client, { timeoutMs: 5_000 });
    const windowEnd = epochNow();
    if (i >= warmup) {
      onSample({
        durationMs: response.durationMs,
        serverTimingMs: response.serverTimingMs,
        statusCode: response.statusCode,
        newConnection: response.phases.connect !== undefined,
        windowStart,
        windowEnd,
      });
    }
    await sleep(PROBE_GAP_MS.min + Math.random() * (PROBE_GAP_MS.max - PROBE_GAP_MS.min));
  }
}

/**
 * Runs a node-cron task every second (`* * * * * *`, as the daemon's 1 s checks would) and reports
 * how late each firing is: the wall clock when the callback runs minus the second node-cron
 * scheduled it for. Resolves after `fires` firings, with the task destroyed.
 */
export function cronLateness(fires: number, onFire: (fire: CronFire) => void): Promise<void> {
  return new Promise((resolve) => {
    let fired = 0;
    const task = createTask('* * * * * *', (context) => {
      // Taken first thing: anything done before this line would count as lateness.
      const now = Date.now();
      if (fired >= fires) return;
      fired++;
      const scheduledAt = context.date.getTime();
      onFire({ scheduledAt, latenessMs: now - scheduledAt });
      if (fired === fires) {
        void Promise.resolve(task.destroy()).then(() => resolve());
      }
    });
    void task.start();
  });
}
