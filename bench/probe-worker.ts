/**
 * Worker-thread side of bench/measurement.ts: the same probes as the main thread's scenarios, run
 * on this thread's own event loop with its own ApiClient, samples sent back as plain messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ApiClient } from '../src/api/client.js';
import {
  BENCH_USER_AGENT,
  cronLateness,
  probeSeries,
  type ProbeWorkerData,
  type WorkerCommand,
  type WorkerEvent,
} from './probe.js';

const port = parentPort;
if (!port) throw new Error('probe-worker must run in a worker thread');

const { baseUrl, apiKey } = workerData as ProbeWorkerData;
const client = new ApiClient({ baseUrl, apiKey, userAgent: BENCH_USER_AGENT });
const emit = (event: WorkerEvent): void => port.postMessage(event);
const fail = (err: unknown): void =>
  emit({ type: 'failed', message: err instanceof Error ? err.message : String(err) });

// Commands arrive one at a time: the main thread waits for each one's `*-done` before the next.
port.on('message', (command: WorkerCommand) => {
  switch (command.type) {
    case 'probe':
      void probeSeries(client, command.count, command.warmup, (sample) =>
        emit({ type: 'sample', sample }),
      ).then(() => emit({ type: 'probe-done' }), fail);
      break;
    case 'cron':
      void cronLateness(command.fires, (fire) => emit({ type: 'cron-fire', fire })).then(
        () => emit({ type: 'cron-done' }),
        fail,
      );
      break;
    case 'close':
      void client.close().then(() => {
        emit({ type: 'closed' });
        port.close();
      }, fail);
      break;
  }
});
