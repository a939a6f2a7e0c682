/**
 * Collects the measurement thread's young generation between runs, so that a scavenge does not
 * land inside one. The worker's young generation is small (2 MiB, see `host.ts`), so V8 scavenges
 * it every few seconds at 1 s pings, each time for about a millisecond (several on a busy machine),
 * and one that falls between a ping's connect and its answer shows in that ping's latency and
 * lateness. The scheduler calls this just before a run (`SchedulerOptions.prepare`): when less
 * than `RUN_HEADROOM_BYTES` is left before V8 would scavenge on its own, it scavenges now, in the
 * run's lead time. Most runs find enough room and cost a look at the heap statistics (~5 µs).
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Room a run needs in the young generation: a ping allocates some tens of KiB, a lifecycle run
 * more, and results, logs and timers between runs add to it (bench/LOG.md, "Drift").
 */
export const RUN_HEADROOM_BYTES = 512 * 1024;

type GcFunction = (options: { type: 'minor' | 'major'; execution: 'sync' | 'async' }) => void;

/**
 * The collector of this thread: V8's `gc` function. The measurement worker has it in its own
 * global scope (`host.ts` sets `--expose-gc` before creating it), and so has the main thread that
 * measures inline when the `isa-monitor` command's interpreter line started it (`cli.ts`);
 * elsewhere (`node dist/cli.js`, tests) the flag is set now and a new context, the only one
 * created after it, provides it: 2 MiB more on Node 24.
 */
export function youngGenerationCollector(): () => void {
  const gc = ownGc() ?? newContextGc();
  return () => {
    const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    if (young !== undefined && young.space_available_size < RUN_HEADROOM_BYTES) {
      gc({ type: 'minor', execution: 'sync' });
    }
  };
}

function ownGc(): GcFunction | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? (gc as GcFunction) : undefined;
}

function newContextGc(): GcFunction {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as GcFunction;
}
