/** Worker-thread entry: runs the measurement engine and relays its events to the main thread. */
import { setFlagsFromString } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { startEngine } from './engine.js';
import type { MeasurementCommand, MeasurementEvent, MeasurementInit } from './messages.js';
import { youngGenerationCollector } from './young-generation.js';

const port = parentPort;
if (!port) throw new Error('measurement worker must run in a worker thread');

// undici parses HTTP with llhttp, a WebAssembly module compiled at the first request. V8 compiles
// it with Liftoff and then recompiles it with TurboFan in the background, and that recompilation
// took some 30 MiB for a moment: the daemon's peak RSS (bench/README.md, "Memory"). Liftoff's code
// parses a ping's few hundred bytes just as well. The flag is read when a module is compiled, so
// setting it here, before any request, is in time; it is process-wide, and only this thread
// compiles WebAssembly.
setFlagsFromString('--liftoff-only');

const emit = (event: MeasurementEvent): void => port.postMessage(event);

try {
  const engine = await startEngine(workerData as MeasurementInit, emit, {
    prepareRun: youngGenerationCollector(),
  });
  port.on('message', (command: MeasurementCommand) => {
    if (command.type !== 'stop') return;
    void engine.stop(command.graceMs).then(
      () => {
        emit({ type: 'stopped' });
        port.close();
      },
      (err: unknown) => emit({ type: 'fatal', message: `shutdown failed: ${String(err)}` }),
    );
  });
} catch (err) {
  emit({ type: 'fatal', message: err instanceof Error ? err.message : String(err) });
  port.close();
}
