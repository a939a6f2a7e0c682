/**
 * The ISA API simulator: a faithful, stateful implementation of the API spec with fault
 * injection, used by the daemon's demo mode, by `isa-monitor simulate` and by tests.
 * See docs/simulator.md.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createSimulator, type SimulatorOptions } from './app.js';
import type { FaultController } from './faults.js';
import type { SimulatorState } from './state.js';

export { createSimulator, classifyEndpoint, clientIdFor, FAULT_HEADER } from './app.js';
export type { Simulator, SimulatorOptions } from './app.js';
export { SimulatorState, serviceDataSetFor } from './state.js';
export type { SessionRecord } from './state.js';
export {
  FaultController,
  FAULT_STATUSES,
  SIM_ENDPOINTS,
  faultRuleSchema,
  faultSchema,
  timelineEntrySchema,
} from './faults.js';
export type { Fault, FaultRule, SimEndpoint, TimelineEntry, TimelineRule } from './faults.js';
export { DEMO_TIMELINE, DEMO_TIMELINE_PERIOD_MS } from './demo-timeline.js';
export { TEST_ADDRESSES, VALIDATION_DOWN_RETRY_AFTER_SECONDS } from './addresses.js';
export type { TestAddressBehaviour } from './addresses.js';

export interface RunningSimulator {
  /** Base URL of the root environment, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string;
  port: number;
  state: SimulatorState;
  faults: FaultController;
  /** Stops listening and destroys every connection, hanging requests included. */
  close(): Promise<void>;
}

/**
 * Starts the simulator on `host:port` (default 127.0.0.1 and a free port) and resolves once it
 * listens.
 */
export async function startSimulator(
  options: SimulatorOptions & { port?: number; host?: string },
): Promise<RunningSimulator> {
  const { app, state, faults } = createSimulator(options);
  const host = options.host ?? '127.0.0.1';
  const server: Server = createServer(app);
  // Track sockets so close() can end them even while a `hang` fault holds a request open.
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost =
    host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  options.logger?.info({ url: `http://${urlHost}:${port}` }, 'ISA API simulator listening');
  // Closing twice (a test and its cleanup, say) waits for the same close.
  let closing: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    state,
    faults,
    close: () =>
      (closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      })),
  };
}
