/**
 * Worker-thread entry: runs the measurement engine and relays its events to the main thread. An
 * entry point, like the CLI: it hands the engine the checks of the registry, which functions
 * cannot cross a thread to receive (docs/architecture.md, "The composition root").
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CHECK_LIST } from '../checks/index.js';
import { startEngine } from './engine.js';
import type { MeasurementCommand, MeasurementEvent, MeasurementInit } from './messages.js';
import { youngGenerationCollector } from './young-generation.js';

const port = parentPort;
if (!port) throw new Error('measurement worker must run in a worker thread');

const emit = (event: MeasurementEvent): void => port.postMessage(event);

try {
  const engine = await startEngine(workerData as MeasurementInit, emit, {
    checks: CHECK_LIST,
    prepareRun: youngGenerationCollector(),
  });
  port.on('message', (command: MeasurementCommand) => {
    if (command.type === 'reload') {
      try {
        emit({ type: 'reloaded', report: engine.reload(command.config) });
      } catch (err) {
        emit({ type: 'fatal', message: `reload failed: ${String(err)}` });
      }
      return;
    }
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
