/**
 * Where the time of one API call goes. The monitor reports a call's latency split into phases, all
 * on the monotonic clock (`performance.now()`), in milliseconds:
 *
 * - `resolve`: DNS lookup of the host name. Present only when a name was resolved for a new
 *   connection; an IP literal (or a reused connection) has no resolve phase.
 * - `connect`: TCP handshake of a new connection, from its first connection attempt (the
 *   `connect` system call) to the socket's `connect` event.
 * - `tls`: TLS handshake of a new `https:` connection.
 * - `processing`: request written to the socket → response headers received (time to first byte).
 * - `transfer`: response headers received → body fully read.
 *
 * "Received" and "read" are when the bytes reached the thread: the socket read that delivered
 * them (`readAt`), not the moment undici had parsed them. Parsing a response (llhttp, undici's
 * bookkeeping, the handler) takes this thread 0.1-0.15 ms on the benchmark machine, of which the
 * API spent none (bench/LOG.md, "Timed to the read, not to the parse"). A thread stalled
 * before the read still counts: the stamp is taken when the event loop delivers the bytes.
 *
 * undici does not time connections itself, so connection phases come from a measuring connector:
 * `createMeasuringConnector` wraps undici's own `buildConnector` and stamps each socket it opens
 * with the times of its lookup, its first connection attempt, TCP connect and TLS handshake
 * (`connectionTimingOf`). A request learns which socket carried it from undici's
 * `undici:client:sendHeaders` diagnostics channel (see `client.ts`). A keep-alive connection that
 * was already open when a request started has no resolve/connect/tls phases at all: absent, not 0,
 * so histograms of connect time are not diluted by reuse. A dispatcher built without this
 * connector (an injected plain `Agent`, a `MockAgent`) yields only `processing` and `transfer`.
 *
 * A call is timed from the moment it reaches the network. One that opens its connection starts at
 * the lookup of the host name, or for an IP literal at the first connection attempt
 * (`connectionOpenedAt`): where blackbox_exporter's phases start too (Go's `DNSStart`, else
 * `ConnectStart`). Before it, Node builds the socket object and defers the `connect` system call
 * to a later tick, behind whatever else the thread runs then: about 0.45 ms of the thread's own
 * work on the benchmark machine, which no API made slower (bench/LOG.md, "Where a new
 * connection's time goes"). One on a kept-alive connection starts as its request is written.
 */
import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction, Socket } from 'node:net';
import type { Agent, Pool, buildConnector } from 'undici';
import UndiciAgentClass from 'undici/lib/dispatcher/agent.js';
import UndiciPoolClass from 'undici/lib/dispatcher/pool.js';
import buildConnectorFunction from 'undici/lib/core/connect.js';
import { ConnectTimeoutError } from 'undici/lib/core/errors.js';
import type { PhaseTimings } from '../kernel/api.js';

export type { PhaseTimings } from '../kernel/api.js';

/**
 * undici's three classes the monitor uses, from their own modules: undici's index also loads fetch,
 * WebSocket, EventSource, caches and mocks, about 3 MiB of heap and 8 MiB of RSS in the
 * measurement thread for nothing (bench/LOG.md, "Memory"). undici declares no `exports` map,
 * so these paths are public files of the pinned version (typed in `vendor-modules.d.ts`);
 * `test/api/timing.test.ts` checks they are undici's own `Agent` and `buildConnector`.
 */
export const UndiciAgent = UndiciAgentClass;
export const UndiciPool = UndiciPoolClass;
export const buildUndiciConnector = buildConnectorFunction;

/** Monotonic timestamps (`performance.now()`) of one connection's establishment. */
export interface ConnectionTiming {
  /** The connector was asked for a socket. */
  startedAt: number;
  /** The lookup of the host name began; absent for IP literals. */
  lookupStartedAt?: number;
  /** The host name was resolved; absent for IP literals. */
  resolvedAt?: number;
  /** The first connection attempt: just before the `connect` system call. */
  attemptedAt?: number;
  /** The TCP handshake completed. */
  connectedAt?: number;
  /** Through a proxy's CONNECT tunnel: the proxy answered `200` (`tunnel.ts`). */
  tunnelAt?: number;
  /** The TLS handshake completed; absent for `http:`. */
  secureAt?: number;
  /**
   * The latest read of this socket: bytes (or the end of the stream) reached the thread, before
   * undici parsed them. Updated on every read for the connection's life, so it belongs to
   * whichever response those bytes were part of (`readAt`).
   */
  lastReadAt?: number;
}

/**
 * Timings keyed by socket. A WeakMap rather than a property on the socket so nothing is added to
 * undici's objects; entries vanish with their sockets, so this holds no state worth owning.
 */
const connectionTimings = new WeakMap<object, ConnectionTiming>();

/** The establishment timings of a socket opened by a measuring connector, if it was. */
export function connectionTimingOf(socket: object): ConnectionTiming | undefined {
  return connectionTimings.get(socket);
}

/**
 * Stamps a socket opened outside `createMeasuringConnector` (a proxy tunnel's TLS socket,
 * `tunnel.ts`) with its establishment timings, and keeps its latest read as that connector does.
 */
export function recordConnectionTiming(socket: Socket, timing: ConnectionTiming): void {
  connectionTimings.set(socket, timing);
  socket.prependListener('readable', () => {
    timing.lastReadAt = performance.now();
  });
}

/** undici's connect timeout when none is given: the same here. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Builds an undici connector (for the `connect` option of `Agent`, `Pool` or `Client`) that opens
 * sockets as undici's default connector does and records when each one resolved its host,
 * completed TCP and completed TLS.
 *
 * The connect timeout (`timeout`, 10 s by default, as undici's) is this connector's own, on a
 * plain timer cleared when the socket connects. undici's runs on its shared coarse clock, which
 * ticks half a second after one of its timers is set, even when it was cleared meanwhile: a ping
 * every 60 s woke the measuring thread once more half a second after each connection
 * (bench/LOG.md, "No half-second tick after a call"). The error is undici's own
 * `ConnectTimeoutError`.
 */
export function createMeasuringConnector(
  options: buildConnector.BuildOptions = {},
): buildConnector.connector {
  const connectTimeoutMs = options.timeout ?? DEFAULT_CONNECT_TIMEOUT_MS;
  // The connection being opened, for the lookup below: net calls it synchronously from inside
  // `base`, so this is set around that call only.
  let opening: ConnectionTiming | undefined;
  const lookup: LookupFunction = ('lookup' in options && options.lookup) || dnsLookup;
  const timedLookup: LookupFunction = (hostname, lookupOptions, onLookup) => {
    if (opening) opening.lookupStartedAt ??= performance.now();
    lookup(hostname, lookupOptions, onLookup);
  };
  // undici's connector returns the socket it creates, though its type says `void`.
  const base = buildUndiciConnector({ ...options, timeout: 0, lookup: timedLookup }) as unknown as (
    connectOptions: buildConnector.Options,
    callback: buildConnector.Callback,
  ) => Socket | undefined;
  return (connectOptions, callback) => {
    const timing: ConnectionTiming = { startedAt: performance.now() };
    const isTls = connectOptions.protocol === 'https:';
    opening = timing;
    let socket: Socket | undefined;
    let connectTimeout: ConnectTimeout | undefined;
    let connectEnded = false;
    try {
      socket = base(connectOptions, (...args: Parameters<buildConnector.Callback>) => {
        connectEnded = true;
        connectTimeout?.connected();
        // undici calls back on `connect` (http) or `secureConnect` (https) and writes the first
        // request from inside this callback, so stamp the time before handing the socket over.
        if (args[0] === null) {
          const now = performance.now();
          if (isTls) timing.secureAt = now;
          else timing.connectedAt = now;
        }
        callback(...args);
      });
    } finally {
      opening = undefined;
    }
    if (socket) {
      // A connector that called back at once has nothing left to time out.
      if (connectTimeoutMs > 0 && !connectEnded) {
        connectTimeout = armConnectTimeout(socket, connectTimeoutMs, connectOptions, isTls);
      }
      stampSocket(socket, timing, isTls);
    }
  };
}

/** The connector's own connect timeout on one socket: `connected()` ends it. */
interface ConnectTimeout {
  connected(): void;
}

/**
 * Destroys `socket` with undici's `ConnectTimeoutError` unless it connects within `timeoutMs`.
 * Ref'd: Node forgets a cleared ref'd timer at once, where a cleared unref'd one still wakes the
 * thread when it would have fired (limits/timers.ts). The socket holds the process open meanwhile
 * anyway.
 */
function armConnectTimeout(
  socket: Socket,
  timeoutMs: number,
  connectOptions: buildConnector.Options,
  isTls: boolean,
): ConnectTimeout {
  let ended = false;
  const timer = setTimeout(() => {
    // A turn later, as undici does: an error the socket reports in this turn comes first.
    setImmediate(() => {
      if (!ended)
        socket.destroy(
          new ConnectTimeoutError(
            `Connect Timeout Error (attempted address: ${connectOptions.hostname}:` +
              `${connectOptions.port || (isTls ? 443 : 80)}, timeout: ${timeoutMs}ms)`,
          ),
        );
    });
  }, timeoutMs);
  socket.once('close', () => clearTimeout(timer));
  return {
    connected() {
      ended = true;
      clearTimeout(timer);
    },
  };
}

/** Records `timing` for `socket` and stamps it at each step of its establishment and each read. */
function stampSocket(socket: Socket, timing: ConnectionTiming, isTls: boolean): void {
  connectionTimings.set(socket, timing);
  // `lookup` fires once per resolved address; net skips it for IP literals.
  socket.once('lookup', () => {
    timing.resolvedAt ??= performance.now();
  });
  // Emitted by net just before each `connect` system call (Node 20.12 and later); with
  // several addresses of a name, the first attempt starts the connect phase.
  socket.once('connectionAttempt', () => {
    timing.attemptedAt ??= performance.now();
  });
  if (isTls) {
    // For TLS the callback fires after the handshake; `connect` still marks the TCP part.
    socket.once('connect', () => {
      timing.connectedAt ??= performance.now();
    });
  }
  // undici reads in paused mode: on `readable` it reads and parses what arrived (the end of
  // the stream, which ends a body that runs to the close, is a `readable` too). Prepended, so
  // this stamp precedes that work.
  socket.prependListener('readable', () => {
    timing.lastReadAt = performance.now();
  });
}

/** Options of `createMeasuringAgent`: undici's `Agent` options with connector options in `connect`. */
export type MeasuringAgentOptions = Omit<Agent.Options, 'connect'> & {
  connect?: buildConnector.BuildOptions;
};

/**
 * An undici `Agent` whose connections are timed (see `createMeasuringConnector`). The API client
 * creates one per client by default; tests and benchmarks that inject their own dispatcher can use
 * this to keep the connection phases.
 */
export function createMeasuringAgent(options: MeasuringAgentOptions = {}): Agent {
  const { connect, ...rest } = options;
  return new UndiciAgent({ ...rest, connect: createMeasuringConnector(connect) });
}

/**
 * An undici `Pool` of one origin whose connections are timed: the API client's dispatchers (one
 * for kept-alive calls, one for calls that open a new connection each, `freshConnection`). Not an
 * `Agent`: undici's `Agent` destroys an origin's pool when its last connection closes, so whenever
 * a connection did not outlive the gap between runs (always, with a new connection per ping; for
 * checks minutes apart, whenever the server closed the idle one) it built a new `Pool` and
 * `Client`, and the errors of their destruction, for the next run (bench/LOG.md, "CPU per
 * run"). A pool outlives its connections; the client has one origin.
 */
export function createMeasuringPool(origin: string, options: MeasuringAgentOptions = {}): Pool {
  const { connect, ...rest } = options;
  return new UndiciPool(origin, { ...rest, connect: createMeasuringConnector(connect) });
}

/** The connection a request opened itself, or undefined for a reused one (or none measured). */
function openedFor(
  timing: ConnectionTiming | undefined,
  requestStartedAt: number,
): ConnectionTiming | undefined {
  return timing !== undefined && timing.startedAt >= requestStartedAt ? timing : undefined;
}

/**
 * The connection phases a request paid for. A connection that started before the request did was
 * already open (keep-alive reuse), so the request paid nothing: no phases at all.
 */
export function connectionPhases(
  timing: ConnectionTiming | undefined,
  requestStartedAt: number,
): Pick<PhaseTimings, 'resolve' | 'connect' | 'tls'> {
  const opened = openedFor(timing, requestStartedAt);
  if (!opened) return {};
  const phases: Pick<PhaseTimings, 'resolve' | 'connect' | 'tls'> = {};
  if (opened.resolvedAt !== undefined) {
    phases.resolve = opened.resolvedAt - (opened.lookupStartedAt ?? opened.startedAt);
  }
  if (opened.connectedAt !== undefined) {
    phases.connect =
      opened.connectedAt - (opened.attemptedAt ?? opened.resolvedAt ?? opened.startedAt);
    if (opened.secureAt !== undefined) phases.tls = opened.secureAt - opened.connectedAt;
  }
  return phases;
}

/**
 * When a request that opened its connection reached the network: its lookup's start, else its
 * first connection attempt, else (neither seen) when the connector was asked. Undefined for a
 * reused connection.
 */
export function connectionOpenedAt(
  timing: ConnectionTiming | undefined,
  requestStartedAt: number,
): number | undefined {
  const opened = openedFor(timing, requestStartedAt);
  return opened && (opened.lookupStartedAt ?? opened.attemptedAt ?? opened.startedAt);
}

/**
 * When the bytes undici is handing over now reached the thread: the socket's latest read, if the
 * connection is measured and that read came after `since` (the request's start). Bytes read
 * before the request was written are not its answer, and then the caller takes its own clock.
 */
export function readAt(timing: ConnectionTiming | undefined, since: number): number | undefined {
  const read = timing?.lastReadAt;
  return read !== undefined && read >= since ? read : undefined;
}

/**
 * The server's own processing time from a `Server-Timing` header, in milliseconds: the largest
 * `dur` of any metric (`sim;dur=12.345`, `app;desc="x";dur=7`). The largest, because entries are
 * usually a total and its parts, and a sum would count the parts twice. Null when no metric
 * carries a usable `dur`.
 */
export function parseServerTiming(header: string | undefined): number | null {
  if (header === undefined) return null;
  let best: number | null = null;
  for (const metric of splitOutsideQuotes(header, ',')) {
    // The first part is the metric name; the rest are `param=value` pairs.
    for (const param of splitOutsideQuotes(metric, ';').slice(1)) {
      const eq = param.indexOf('=');
      if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'dur') continue;
      let raw = param.slice(eq + 1).trim();
      if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) raw = raw.slice(1, -1);
      if (!/^\d+(\.\d+)?$/.test(raw)) continue;
      const dur = Number(raw);
      if (Number.isFinite(dur) && (best === null || dur > best)) best = dur;
    }
  }
  return best;
}

/** Splits on `separator` except inside double-quoted strings (Server-Timing `desc="a, b"`). */
function splitOutsideQuotes(value: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value.charAt(i);
    if (quoted && ch === '\\' && i + 1 < value.length) {
      current += ch + value.charAt(++i);
      continue;
    }
    if (ch === '"') quoted = !quoted;
    if (ch === separator && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}
