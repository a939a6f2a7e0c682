/**
 * The ISA API simulator: a faithful, stateful implementation of the API spec with fault
 * injection, used by the daemon's demo mode, by `isa-monitor simulate` and by tests.
 * See docs/simulator.md.
 */
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createSimulator, type SimulatorOptions } from './app.js';
import type { CertificateOptions, SimulatorCertificates } from './certificates.js';
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
export type { CertificateOptions, SimulatorCertificates } from './certificates.js';

export interface RunningSimulator {
  /**
   * Base URL of the root environment, e.g. `http://127.0.0.1:41234` (no trailing slash);
   * `https://` when started with `tls`.
   */
  url: string;
  port: number;
  /** With `tls`: the certificate authority that signed the server's certificate, as PEM. */
  caPem: string | null;
  /** With `tls`: everything about the certificate it presents (null over plain HTTP). */
  certificates: SimulatorCertificates | null;
  state: SimulatorState;
  faults: FaultController;
  /** Stops listening and destroys every connection, hanging requests included. */
  close(): Promise<void>;
}

export interface StartSimulatorOptions extends SimulatorOptions {
  port?: number;
  host?: string;
  /**
   * Serve HTTPS with a certificate the simulator makes itself (`certificates.ts`): lifetime and
   * host names as given, signed by a CA of its own that `caPem` returns. Absent: plain HTTP.
   */
  tls?: CertificateOptions;
}

/**
 * Starts the simulator on `host:port` (default 127.0.0.1 and a free port) and resolves once it
 * listens; over HTTPS with `tls`.
 */
export async function startSimulator(options: StartSimulatorOptions): Promise<RunningSimulator> {
  const { app, state, faults } = createSimulator(options);
  const host = options.host ?? '127.0.0.1';
  // Loaded only when asked for: the certificate library stays out of plain-HTTP uses.
  const certificates =
    options.tls === undefined
      ? null
      : await (await import('./certificates.js')).generateCertificates(options.tls);
  const server: Server =
    certificates === null
      ? createServer(app)
      : createHttpsServer(
          {
            cert: certificates.chainPem,
            key: certificates.keyPem,
            // Mutual TLS when a client certificate was made: only the CA's are accepted.
            ...(certificates.client === null
              ? {}
              : { requestCert: true, rejectUnauthorized: true, ca: [certificates.caPem] }),
          },
          app,
        );
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
  const url = `${certificates === null ? 'http' : 'https'}://${urlHost}:${port}`;
  options.logger?.info({ url }, 'ISA API simulator listening');
  // Closing twice (a test and its cleanup, say) waits for the same close.
  let closing: Promise<void> | null = null;
  return {
    url,
    port,
    caPem: certificates?.caPem ?? null,
    certificates,
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
