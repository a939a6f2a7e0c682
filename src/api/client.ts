/**
 * The measuring HTTP client of the ISA API, on undici's low-level `dispatch` API.
 *
 * What it guarantees, because a monitor's numbers are only as good as its client:
 * - One attempt per call: no retries and no redirects (a 3xx is just a status). A retrying client
 *   would hide the failure the monitor exists to see.
 * - Every call has a deadline (`timeoutMs`, measured from the call) and can be aborted through an
 *   external `AbortSignal`; the promise settles at the deadline even when undici is still waiting
 *   for a connection, and the late request is aborted as soon as undici starts it.
 * - Every response body is read to the end (up to a size cap) or the exchange is aborted, so no
 *   body is left unconsumed to pin a connection.
 * - `request()` never throws for HTTP or network failures; they come back as data
 *   (`statusCode`, `transportError`, `bodyError`). It throws only for programming errors (an
 *   invalid argument).
 * - The API key never leaves the client: it is held in a private field, and every text that comes
 *   back (headers, body snippets, error messages, and a JSON body's raw text) has it redacted.
 *
 * Latency is measured on the monotonic clock and split into phases; see `timing.ts` for their
 * definitions and how connection phases are obtained.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingHttpHeaders } from 'node:http';
import { rootCertificates } from 'node:tls';
import type { Dispatcher } from 'undici';
import {
  decodeBody,
  extractErrorMessage,
  extractRequestId,
  flattenHeaders,
  INVALID_RETRY_AFTER,
  SPEC_RETRY_AFTER_MS,
  parseRetryAfter,
  tooLargeBody,
  type DecodedBody,
} from './response.js';
import type { ClientIdentity } from './client-identity.js';
import { createEgressPool, forwardsThroughProxy, type EgressOptions } from './egress.js';
import { proxyRouteFor, type ProxyRoute, type ProxySettings } from './proxy.js';
import {
  connectionOpenedAt,
  connectionPhases,
  connectionTimingOf,
  parseServerTiming,
  readAt,
  type PhaseTimings,
} from './timing.js';
import {
  CALLER_ABORT_CODE,
  DEADLINE_CODE,
  UNEXPECTED_UPGRADE_CODE,
  classifyTransportError,
  redactor,
} from './transport-errors.js';
import type { ApiCall, ApiResponse, ApiTransport } from '../kernel/api.js';

export type { PhaseTimings } from './timing.js';
export type { TransportError, TransportReason } from './transport-errors.js';
export type { BodyError } from './response.js';
export type {
  ApiCall,
  ApiResponse,
  ApiTransport,
  LateAnswer,
  RequestOptions,
} from '../kernel/api.js';

export interface ApiClientOptions {
  /** Base address of one environment; may carry a path prefix (`http://host/env/production`). */
  baseUrl: string;
  /**
   * Sent as `Authorization: Bearer <apiKey>`; never returned, logged or thrown. Null for an
   * environment without a key (no enabled check sends an API request, docs/configuration.md "API
   * keys"): requests then go without `Authorization`.
   */
  apiKey: string | null;
  /** The full `User-Agent` value, e.g. `isa-monitor/0.1.0`. */
  userAgent: string;
  /**
   * Where requests go. Default: a measuring `Pool` of the base URL's origin per client (closed by
   * `close()`, see `createMeasuringPool`), so connection reuse is this client's own. An injected
   * dispatcher must not retry or follow redirects; build it with `createMeasuringAgent` or
   * `createMeasuringPool` to keep the connection phases.
   */
  dispatcher?: Dispatcher;
  /**
   * Certificate authorities (PEM) trusted in addition to Node's bundled roots for `https:` base
   * URLs: an environment's `ca_file` (docs/configuration.md, "Extra trust"). Applies to the
   * client's own pools, so it cannot be combined with `dispatcher` (build that with `connect.ca`).
   */
  ca?: readonly string[];
  /**
   * The environment's egress proxy (docs/configuration.md, "Egress proxy"); its password is a
   * secret like the key. Applies to the client's own pools, so it cannot be combined with
   * `dispatcher`.
   */
  proxy?: ProxySettings;
  /** The environment's client certificate, presented on every new TLS connection. */
  identity?: ClientIdentity;
  /** Largest response body read; beyond it the call ends with `bodyError: 'too_large'`. */
  maxBodyBytes?: number;
  /**
   * Sees every response of every call (late answers too) before its caller does: how the
   * environment's Retry-After gate learns of a 429 on any path, a cleanup's close included.
   */
  onResponse?: (response: ApiResponse) => void;
}

/** Default body cap: far above any API response, far below what would hurt the daemon. */
export const DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024;

/**
 * API keys (and proxy passwords) shorter than this are not redacted from parsed JSON bodies: replacing a short string
 * everywhere would corrupt ordinary text. Error messages, snippets and headers are always
 * redacted, whatever the key's length.
 */
export const MIN_BODY_REDACTION_LENGTH = 8;

const SEND_HEADERS_CHANNEL = 'undici:client:sendHeaders';

/** Shape of an `undici:client:sendHeaders` message, as far as this client reads it. */
interface SendHeadersMessage {
  request: { method: string; path: string };
  socket: object;
}

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
const HEADER_TEXT = /^[\x20-\x7e]+$/;

/** Calls in flight on this thread, of every client: see `callsInFlight`. */
let threadInFlight = 0;
/** Told when the thread's first call starts; what it returns, when the last one ends. */
let spellWatcher: (() => () => void) | undefined;
/** The end of the current spell of calls in flight, from `spellWatcher`. */
let endSpell: (() => void) | undefined;

/**
 * How many API calls of any client on this thread are in flight. A wait that must not delay
 * reading their answers (`waitUntil`, for a run's first request) keeps the event loop turning
 * while there are any, and may sleep the thread when there are none.
 */
export function callsInFlight(): number {
  return threadInFlight;
}

/**
 * Watches this thread's spells of calls in flight, from the first call of any client starting to
 * the last one ending: `onSpell` is called as a spell starts, and what it returns as it ends. The
 * measurement engine's lag sampler samples then (`measurement/lag.ts`). One watcher per thread;
 * the result stops watching.
 */
export function watchCallsInFlight(onSpell: () => () => void): () => void {
  spellWatcher = onSpell;
  return () => {
    if (spellWatcher === onSpell) spellWatcher = undefined;
  };
}

/** One API environment's client. See the module comment for its guarantees. */
export class ApiClient implements ApiTransport {
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  /**
   * Where `freshConnection` calls go: a pool of their own (`createMeasuringPool`), whose
   * connections close after each answer, so such a call never finds an idle connection to reuse.
   * Created on first use.
   */
  #freshDispatcher: Dispatcher | null = null;
  /** Options of the client's own pools: trust, proxy route and client certificate. */
  readonly #egress: EgressOptions;
  /** The proxy route of this environment's requests, or null when they go direct. */
  readonly #route: ProxyRoute | null;
  readonly #identity: ClientIdentity | undefined;
  readonly #origin: string;
  readonly #pathPrefix: string;
  readonly #baseHeaders: Record<string, string>;
  readonly #maxBodyBytes: number;
  readonly #redact: (text: string) => string;
  readonly #redactBody: (text: string) => string;
  readonly #onResponse: (response: ApiResponse) => void;
  #inFlight = 0;
  #closed = false;
  /** The exchange whose request undici is writing right now; see `#onSendHeaders`. */
  #awaitingSocket: Exchange | null = null;

  /**
   * Validates the options (throwing a plain `Error` that never repeats the key or the URL) and,
   * unless a dispatcher is injected, creates this client's own measuring pool.
   */
  constructor(options: ApiClientOptions) {
    const base = parseBaseUrl(options.baseUrl);
    this.#origin = base.origin;
    this.#pathPrefix = base.pathPrefix;
    if (
      options.apiKey !== null &&
      (typeof options.apiKey !== 'string' || !VISIBLE_ASCII.test(options.apiKey))
    ) {
      throw new Error('apiKey must be a non-empty string of visible ASCII characters');
    }
    if (typeof options.userAgent !== 'string' || !HEADER_TEXT.test(options.userAgent)) {
      throw new Error('userAgent must be a non-empty string of printable ASCII characters');
    }
    const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) {
      throw new Error('maxBodyBytes must be a positive integer');
    }
    this.#maxBodyBytes = maxBodyBytes;
    const key = options.apiKey;
    this.#route = proxyRouteFor(options.proxy, base.origin);
    this.#identity = options.identity;
    this.#baseHeaders = baseHeadersOf(key, options.userAgent, this.#route, base.origin);
    this.#redact = secretsRedactor([key, options.proxy?.password, this.#route?.authorization]);
    this.#redactBody = secretsRedactor(
      [key, options.proxy?.password, this.#route?.authorization].filter(
        (secret) => (secret?.length ?? 0) >= MIN_BODY_REDACTION_LENGTH,
      ),
    );
    this.#onResponse = options.onResponse ?? (() => {});
    this.#egress = egressOptionsOf(options, base.origin, this.#route);
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher = options.dispatcher ?? createEgressPool(this.#egress);
  }

  /**
   * Performs one call and describes what happened. Never throws for HTTP or network failures;
   * throws a `TypeError`/`RangeError` for invalid arguments.
   */
  async request(call: ApiCall): Promise<ApiResponse> {
    const prepared = this.#prepare(call);
    // A rotated client certificate is looked for before the clock starts: not the API's time.
    if (this.#identity !== undefined) await this.#identity.refresh();
    const startedAt = performance.now();
    if (call.signal?.aborted) {
      // Nothing was sent; the caller gave up before the call began.
      return this.#describe(call, startedAt, null, {
        kind: 'failed',
        endedAt: performance.now(),
        error: new CallCancelledError(CALLER_ABORT_CODE, 'request aborted by the caller'),
      });
    }
    return new Promise<ApiResponse>((resolve) => {
      const pending: PendingCall = { call, startedAt, answered: false, resolve };
      const exchange = new Exchange(call.method, prepared.path, this.#maxBodyBytes, {
        requestStarted: (started) => this.#expectSocket(started),
        settled: (settled, outcome) => this.#settle(pending, settled, outcome),
      });
      this.#armDeadline(pending, exchange);
      this.#beginFlight();
      this.#dispatch(pending, prepared, exchange);
    });
  }

  /**
   * Checks a call's arguments and builds what goes on the wire: its target, headers and body.
   * The body is serialized before the clock starts: one that cannot be is a caller's bug.
   */
  #prepare(call: ApiCall): PreparedRequest {
    if (!Number.isFinite(call.timeoutMs) || call.timeoutMs <= 0) {
      throw new RangeError('timeoutMs must be a positive number');
    }
    if (call.correlationId !== undefined && !isCorrelationId(call.correlationId)) {
      throw new TypeError('correlationId must be 1-200 visible ASCII characters');
    }
    const payload =
      call.body === undefined ? null : (JSON.stringify(call.body) as string | undefined);
    if (payload === undefined) throw new TypeError('body is not JSON-serializable');
    const headers: Record<string, string> = { ...this.#baseHeaders };
    if (payload !== null) headers['content-type'] = 'application/json';
    if (call.correlationId !== undefined) {
      headers['x-correlation-id'] = call.correlationId;
      headers['x-request-id'] = call.correlationId;
    }
    return { path: this.#targetOf(call.path), headers, payload };
  }

  /**
   * The caller's deadline or abort ends the call. With `lateAnswer`, the exchange is not
   * aborted yet: the failure is what was measured and is answered at once, while the answer is
   * still read in the background for `graceMs` (a create whose token must be learned).
   */
  #armDeadline(pending: PendingCall, exchange: Exchange): void {
    const { call } = pending;
    pending.onAbort = () =>
      this.#giveUp(
        pending,
        exchange,
        new CallCancelledError(CALLER_ABORT_CODE, 'request aborted by the caller'),
      );
    pending.deadlineTimer = setTimeout(() => {
      this.#giveUp(pending, exchange, this.#deadlineError(call.timeoutMs, exchange));
    }, call.timeoutMs);
    call.signal?.addEventListener('abort', pending.onAbort, { once: true });
  }

  /** Ends a call at its deadline or abort: cancels its exchange, or answers and waits in grace. */
  #giveUp(pending: PendingCall, exchange: Exchange, error: CallCancelledError): void {
    const late = pending.call.lateAnswer;
    if (late === undefined || pending.answered || exchange.settled) {
      exchange.cancel(error);
      return;
    }
    pending.answered = true;
    pending.resolve({
      ...this.#describe(pending.call, pending.startedAt, null, {
        kind: 'failed',
        endedAt: performance.now(),
        error,
      }),
      answerPending: true,
    });
    pending.graceTimer = setTimeout(() => {
      exchange.cancel(
        new CallCancelledError(DEADLINE_CODE, `no answer within ${late.graceMs} ms of grace`),
      );
    }, late.graceMs);
  }

  /** Hands the call's exchange to its dispatcher and starts the call's clock. */
  #dispatch(pending: PendingCall, prepared: PreparedRequest, exchange: Exchange): void {
    const { call } = pending;
    try {
      // The call's own start, for the deadline and for a call that never reaches the network.
      // One that does is timed from when it did (`#describe`), as blackbox_exporter's phases
      // start at its dial: undici's bookkeeping before that is not the API's time.
      const dispatcher = this.#dispatcherFor(call);
      pending.startedAt = performance.now();
      dispatcher.dispatch(
        {
          origin: forwardsThroughProxy(this.#origin, this.#route)
            ? (this.#route?.origin ?? this.#origin)
            : this.#origin,
          path: prepared.path,
          method: call.method,
          headers: prepared.headers,
          body: prepared.payload,
          // Asks for `Connection: close`: the server and undici close the socket after the answer.
          reset: call.freshConnection === true,
          // None of undici's per-phase timers: the call's deadline above (and its grace) ends
          // every exchange, and those timers, on undici's shared clock that ticks half a second
          // after one is set, cleared or not, only woke the measuring thread once more after
          // each call (bench/LOG.md, "No half-second tick after a call"). The connect
          // timeout is the measuring connector's (timing.ts).
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        exchange,
      );
    } catch (err) {
      // A dispatcher reports errors through the handler; one that throws instead is handled
      // the same way.
      exchange.fail(err);
    }
  }

  /**
   * Settles a call once its exchange has: stops its deadline, describes the response, tells the
   * observer, and answers the caller (or, after a give-up with `lateAnswer`, its `onAnswer`).
   */
  #settle(pending: PendingCall, exchange: Exchange, outcome: Outcome): void {
    clearTimeout(pending.deadlineTimer);
    clearTimeout(pending.graceTimer);
    if (pending.onAbort) pending.call.signal?.removeEventListener('abort', pending.onAbort);
    if (this.#awaitingSocket === exchange) this.#awaitingSocket = null;
    this.#endFlight();
    const response = this.#describeSettled(pending, exchange, outcome);
    try {
      this.#onResponse(response);
    } catch {
      // An observer's bug must not leave the call pending.
    }
    if (pending.answered) {
      pending.call.lateAnswer?.onAnswer(response);
    } else if (outcome.kind === 'complete') {
      pending.answered = true;
      // undici hands a keep-alive socket back to its pool one event-loop turn after the
      // response ends (a `setImmediate` queued after this callback returns). Resolving
      // behind it lets a caller's next sequential call reuse that socket instead of
      // opening a second connection. The duration was already taken above.
      queueMicrotask(() => setImmediate(() => pending.resolve(response)));
    } else {
      pending.answered = true;
      pending.resolve(response);
    }
  }

  /**
   * The response of a settled exchange. This runs inside undici's callbacks, which swallow what
   * they catch; an escaped error would leave the call pending forever, so one is reported as a
   * failed call instead.
   */
  #describeSettled(pending: PendingCall, exchange: Exchange, outcome: Outcome): ApiResponse {
    try {
      return this.#describe(pending.call, pending.startedAt, exchange, outcome);
    } catch (err) {
      return this.#describe(pending.call, pending.startedAt, null, {
        kind: 'failed',
        endedAt: outcome.endedAt,
        error: err,
      });
    }
  }

  /** Closes the client's own agents (after in-flight calls end); an injected one is left open. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsDispatcher) {
      await Promise.all([this.#dispatcher.close(), this.#freshDispatcher?.close()]);
    }
  }

  /** The dispatcher of a call: an injected one always; else the fresh-connection pool or the agent. */
  #dispatcherFor(call: ApiCall): Dispatcher {
    if (call.freshConnection !== true || !this.#ownsDispatcher) return this.#dispatcher;
    this.#freshDispatcher ??= createEgressPool(this.#egress);
    return this.#freshDispatcher;
  }

  /**
   * The request target of a call: its path below the base URL's prefix, or, written to a proxy
   * for an `http` partner, the absolute URL (docs/configuration.md, "Egress proxy").
   */
  #targetOf(callPath: string): string {
    const path = this.#pathPrefix + (callPath.startsWith('/') ? callPath : `/${callPath}`);
    return forwardsThroughProxy(this.#origin, this.#route) ? `${this.#origin}${path}` : path;
  }

  /**
   * The error of a call that reached its deadline: the proxy's timeout when the call is still
   * waiting for a connection the proxy has not answered (its TCP handshake or its CONNECT), so
   * the failure names the proxy and not the partner; else the call's own deadline.
   */
  #deadlineError(timeoutMs: number, exchange: Exchange): CallCancelledError {
    if (exchange.requestWrittenAt === undefined && this.#egress.awaiting.tunnels > 0) {
      return new CallCancelledError(
        'PROXY_TIMEOUT',
        `no answer from the proxy within ${timeoutMs} ms`,
      );
    }
    return new CallCancelledError(DEADLINE_CODE, `no complete response within ${timeoutMs} ms`);
  }

  // The sendHeaders channel is process-wide, so this client listens only while it has calls in
  // flight: an idle or forgotten client costs nothing and holds no subscription.
  #beginFlight(): void {
    if (threadInFlight++ === 0) endSpell = spellWatcher?.();
    if (this.#inFlight++ === 0) subscribe(SEND_HEADERS_CHANNEL, this.#onSendHeaders);
  }

  #endFlight(): void {
    if (--threadInFlight === 0) {
      const end = endSpell;
      endSpell = undefined;
      end?.();
    }
    if (--this.#inFlight === 0) unsubscribe(SEND_HEADERS_CHANNEL, this.#onSendHeaders);
  }

  /**
   * undici calls a handler's `onRequestStart` and then, synchronously in the same function
   * (`writeH1`), publishes `undici:client:sendHeaders` with the socket. Remembering the exchange
   * for that one synchronous stretch is how a request learns its socket without reaching into
   * undici's internals. The microtask clears it in case undici does not publish (HTTP/2, a
   * dispatcher that is not undici's Client), so a foreign message cannot be taken for ours.
   */
  #expectSocket(exchange: Exchange): void {
    this.#awaitingSocket = exchange;
    queueMicrotask(() => {
      if (this.#awaitingSocket === exchange) this.#awaitingSocket = null;
    });
  }

  readonly #onSendHeaders = (message: unknown): void => {
    const exchange = this.#awaitingSocket;
    if (exchange === null) return;
    const { request, socket } = message as SendHeadersMessage;
    if (request.method !== exchange.method || request.path !== exchange.path) return;
    exchange.socket = socket;
    this.#awaitingSocket = null;
  };

  #describe(
    call: ApiCall,
    startedAt: number,
    exchange: Exchange | null,
    outcome: Outcome,
  ): ApiResponse {
    const headers = flattenHeaders(exchange?.responseHeaders ?? {}, this.#redact);
    const connection =
      exchange?.socket !== undefined ? connectionTimingOf(exchange.socket) : undefined;
    const phases: PhaseTimings = connectionPhases(connection, startedAt);
    // Timed from when the call reached the network (timing.ts): its new connection's start, else
    // its request's; a call that never got that far, from when undici took it.
    const measuredFrom =
      connectionOpenedAt(connection, startedAt) ?? exchange?.requestWrittenAt ?? startedAt;
    if (exchange?.requestWrittenAt !== undefined && exchange.headersAt !== undefined) {
      phases.processing = exchange.headersAt - exchange.requestWrittenAt;
    }
    if (outcome.kind === 'complete' && exchange?.headersAt !== undefined) {
      phases.transfer = outcome.endedAt - exchange.headersAt;
    }
    const common = {
      operation: call.operation,
      method: call.method,
      path: call.path,
      headers,
      durationMs: outcome.endedAt - measuredFrom,
      phases,
      connectionOpened: phases.connect !== undefined,
      serverTimingMs: parseServerTiming(headers['server-timing']),
      retryAfterMs: retryAfterMsOf(headers['retry-after']),
    };
    if (outcome.kind === 'failed' || exchange === null || exchange.statusCode === null) {
      const error =
        outcome.kind === 'failed'
          ? outcome.error
          : new CallCancelledError('UND_ERR_INFO', 'response ended without a status');
      return {
        ...common,
        statusCode: null,
        body: undefined,
        bodyError: null,
        bodySnippet: null,
        transportError: classifyTransportError(error, this.#redact),
        requestId: null,
      };
    }
    const statusCode = exchange.statusCode;
    const raw = exchange.body();
    const decoded: DecodedBody =
      outcome.kind === 'too_large'
        ? tooLargeBody(raw, this.#redact)
        : decodeBody(raw, headers['content-type'], this.#redact, this.#redactBody);
    return {
      ...common,
      statusCode,
      bodyBytes: raw.length,
      ...decoded,
      transportError: null,
      requestId: extractRequestId(statusCode, decoded.body, this.#redact),
      errorMessage: extractErrorMessage(statusCode, decoded.body, this.#redact),
    };
  }
}

/** What goes on the wire for one call (`ApiClient#prepare`). */
interface PreparedRequest {
  /** The request target (`#targetOf`). */
  path: string;
  headers: Record<string, string>;
  /** The JSON body, or null for none. */
  payload: string | null;
}

/** One call between its start and its answer: what its deadline and its settling share. */
interface PendingCall {
  readonly call: ApiCall;
  /** Re-taken when the exchange is dispatched; until then, for a call that never starts. */
  startedAt: number;
  /** The caller has its answer: the response, or a failure while a late answer is still read. */
  answered: boolean;
  deadlineTimer?: NodeJS.Timeout;
  /** Runs while a late answer is read after a give-up (`lateAnswer.graceMs`). */
  graceTimer?: NodeJS.Timeout;
  onAbort?: () => void;
  resolve(response: ApiResponse): void;
}

/** How an exchange ended. */
type Outcome =
  | { kind: 'complete'; endedAt: number }
  | { kind: 'too_large'; endedAt: number }
  | { kind: 'failed'; endedAt: number; error: unknown };

interface ExchangeHooks {
  requestStarted(exchange: Exchange): void;
  settled(exchange: Exchange, outcome: Outcome): void;
}

/** An error of the client's own making (deadline, caller abort), with a stable `code`. */
class CallCancelledError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CallCancelledError';
  }
}

class BodyTooLargeError extends Error {
  readonly code = 'BODY_TOO_LARGE';
}

/**
 * One request/response as undici's dispatch handler sees it. It records the moments the phases
 * are made of and settles exactly once: complete, too large, or failed (including the client's
 * own deadline or the caller's abort). After settling, anything undici still reports is ignored,
 * and a request undici starts late is aborted on the spot.
 */
class Exchange implements Dispatcher.DispatchHandler {
  socket: object | undefined;
  requestWrittenAt: number | undefined;
  headersAt: number | undefined;
  statusCode: number | null = null;
  responseHeaders: IncomingHttpHeaders = {};
  #controller: Dispatcher.DispatchController | null = null;
  #outcome: Outcome | null = null;
  #chunks: Buffer[] = [];
  #bytes = 0;

  constructor(
    readonly method: string,
    readonly path: string,
    private readonly maxBodyBytes: number,
    private readonly hooks: ExchangeHooks,
  ) {}

  body(): Buffer {
    return Buffer.concat(this.#chunks);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#outcome !== null) {
      controller.abort(
        new CallCancelledError('UND_ERR_ABORTED', 'request started after its call ended'),
      );
      return;
    }
    this.requestWrittenAt = performance.now();
    this.hooks.requestStarted(this);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    if (this.#outcome !== null) return;
    // A client that never asks to switch protocols cannot be answered 101: undici would take
    // what follows for an upgrade it did not request and fail on an internal assertion. The
    // exchange ends here, as a protocol error with a code of its own.
    if (statusCode === 101) {
      const error = new CallCancelledError(
        UNEXPECTED_UPGRADE_CODE,
        'the server switched protocols (101) without being asked',
      );
      this.fail(error);
      controller.abort(error);
      return;
    }
    // Other 1xx informational responses precede the real one.
    if (statusCode < 200) return;
    this.headersAt = this.#arrival();
    this.statusCode = statusCode;
    this.responseHeaders = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#outcome !== null) return;
    const room = this.maxBodyBytes - this.#bytes;
    this.#bytes += chunk.length;
    if (chunk.length > room) {
      if (room > 0) this.#chunks.push(chunk.subarray(0, room));
      this.#settle({ kind: 'too_large', endedAt: performance.now() });
      // Aborting closes the connection: the only way to stop a body short without reading it.
      controller.abort(new BodyTooLargeError(`response body exceeds ${this.maxBodyBytes} bytes`));
      return;
    }
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.#settle({ kind: 'complete', endedAt: this.#arrival() });
  }

  /**
   * When what undici hands over now reached the thread: the socket's latest read (timing.ts,
   * `readAt`), so that parsing it is not counted as the API's time; the clock where the
   * connection is not measured or that read was not this request's.
   */
  #arrival(): number {
    const read =
      this.socket !== undefined && this.requestWrittenAt !== undefined
        ? readAt(connectionTimingOf(this.socket), this.requestWrittenAt)
        : undefined;
    return read ?? performance.now();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.fail(error);
  }

  /** Ends the exchange with an error reported by undici (or thrown by the dispatcher). */
  fail(error: unknown): void {
    this.#settle({ kind: 'failed', endedAt: performance.now(), error });
  }

  /** Ends the exchange from outside (deadline, caller abort) and aborts it if undici started it. */
  cancel(error: CallCancelledError): void {
    if (this.#outcome !== null) return;
    this.fail(error);
    this.#controller?.abort(error);
  }

  get settled(): boolean {
    return this.#outcome !== null;
  }

  #settle(outcome: Outcome): void {
    if (this.#outcome !== null) return;
    this.#outcome = outcome;
    this.hooks.settled(this, outcome);
  }
}

/**
 * The `ca` of a TLS connection that trusts `extra` besides Node's bundled roots. Node verifies
 * against `ca` alone when it is given, so the roots go in too: the extra authorities add to the
 * system's trust, as `ca_file` promises (docs/configuration.md, "Extra trust"), not replace it.
 */
export function withSystemRoots(extra: readonly string[]): string[] {
  return [...rootCertificates, ...extra];
}

/**
 * The headers of every request: the key, `Accept`, `User-Agent`, and for requests written to a
 * proxy in absolute form its credentials (a CONNECT tunnel carries them itself, `tunnel.ts`).
 */
function baseHeadersOf(
  key: string | null,
  userAgent: string,
  route: ProxyRoute | null,
  origin: string,
): Record<string, string> {
  const forward = forwardsThroughProxy(origin, route) && route !== null;
  return {
    ...(key === null ? {} : { authorization: `Bearer ${key}` }),
    accept: 'application/json',
    'user-agent': userAgent,
    ...(forward && route.authorization !== null
      ? { 'proxy-authorization': route.authorization }
      : {}),
  };
}

/** The options of the client's own pools; a proxy or trust needs them (no injected dispatcher). */
function egressOptionsOf(
  options: ApiClientOptions,
  origin: string,
  route: ProxyRoute | null,
): EgressOptions {
  const extraCa = options.ca ?? [];
  if (options.dispatcher !== undefined) {
    if (extraCa.length > 0) {
      throw new Error('ca cannot be combined with an injected dispatcher: give it connect.ca');
    }
    if (options.proxy !== undefined || options.identity !== undefined) {
      throw new Error('proxy and identity cannot be combined with an injected dispatcher');
    }
  }
  return {
    origin,
    route,
    ...(extraCa.length > 0 ? { ca: withSystemRoots(extraCa) } : {}),
    ...(options.identity ? { identity: options.identity } : {}),
    awaiting: { tunnels: 0 },
  };
}

/** Removes each of the secrets (those present) from a text. */
function secretsRedactor(
  secrets: ReadonlyArray<string | null | undefined>,
): (text: string) => string {
  const redactors = secrets
    .filter((secret): secret is string => typeof secret === 'string' && secret !== '')
    .map((secret) => redactor(secret));
  return (text) => redactors.reduce((redacted, redact) => redact(redacted), text);
}

/** A response's `Retry-After` in ms; see `ApiResponse.retryAfterMs`. */
function retryAfterMsOf(header: string | undefined): number | null {
  const parsed = parseRetryAfter(header, Date.now());
  return parsed === INVALID_RETRY_AFTER ? SPEC_RETRY_AFTER_MS : parsed;
}

function isCorrelationId(value: string): boolean {
  return value.length <= 200 && VISIBLE_ASCII.test(value);
}

/**
 * Splits a base URL into origin and path prefix. Errors name the rule, never the URL: it might
 * carry credentials.
 */
function parseBaseUrl(baseUrl: string): { origin: string; pathPrefix: string } {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error('baseUrl is not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error('baseUrl must use http: or https:');
  }
  if (url.username !== '' || url.password !== '') {
    throw new Error('baseUrl must not contain credentials; the API key is sent as a bearer token');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new Error('baseUrl must not contain a query or fragment');
  }
  return { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, '') };
}
