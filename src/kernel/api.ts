/**
 * What a check sees of the API client: a call, its options and the response as data. The client
 * (`api/client.ts`) implements `ApiTransport`; requests to each endpoint are built by the check
 * (or the API part, e.g. `api/sessions.ts`) that makes them (docs/architecture.md, "The kernel").
 */
import type { Operation } from './vocabulary.js';

/** Phase durations of one call, in milliseconds; a phase that did not happen is absent. */
export interface PhaseTimings {
  resolve?: number;
  connect?: number;
  tls?: number;
  processing?: number;
  transfer?: number;
}

/**
 * The egress proxy of one environment, as the configuration resolved it (docs/configuration.md,
 * "Egress proxy"); `api/proxy.ts` routes through it.
 */
export interface ProxySettings {
  /** `http://host:port` of the proxy, without credentials. */
  url: string;
  /** Basic credentials for the proxy; the password is a secret like the API key. */
  username?: string;
  password?: string;
  /** `no_proxy` entries: host names, `.domain` suffixes, IP addresses, CIDR blocks, or `*`. */
  noProxy: readonly string[];
  /** `proxy_connect_header`: sent with every CONNECT (not with absolute-form requests). */
  connectHeaders: Readonly<Record<string, readonly string[]>>;
}

/**
 * Why no usable response arrived. `proxy_error`: the environment's egress proxy refused, was
 * unreachable or did not answer (docs/configuration.md, "Egress proxy"); the partner was not
 * reached.
 */
export type TransportReason = 'timeout' | 'network_error' | 'aborted' | 'proxy_error';

export interface TransportError {
  reason: TransportReason;
  /** The error's code (e.g. `ECONNREFUSED`, `UND_ERR_SOCKET`), or one of the client's own below. */
  code: string;
  /** Sanitized, short, free of the API key and URL credentials. */
  message: string;
}

export type BodyError = 'not_json' | 'invalid_json' | 'too_large';

export interface ApiCall {
  operation: Operation;
  method: 'GET' | 'POST' | 'DELETE';
  /** Path below the base URL, starting with `/`; path segments already encoded. */
  path: string;
  /** Serialized as JSON and sent with `Content-Type: application/json`. */
  body?: unknown;
  /** Deadline of the whole call, from the call to the body fully read. */
  timeoutMs: number;
  /** Aborts the call from outside (e.g. the run's own deadline or shutdown). */
  signal?: AbortSignal;
  /** Sent as `X-Correlation-Id` and `X-Request-Id` so the API's logs can be matched to a run. */
  correlationId?: string;
  /**
   * Open a new connection for this call and close it after the answer (as blackbox_exporter does
   * for every probe), instead of reusing a kept-alive one: connect and TLS are then part of every
   * measurement, whatever the server's idle timeout.
   */
  freshConnection?: boolean;
  /**
   * Keep reading an answer that misses the deadline (or the caller's abort) for `graceMs` more,
   * and hand it to `onAnswer` (a failure when none came). The call itself still settles at the
   * deadline with a timeout: that is what was measured.
   */
  lateAnswer?: LateAnswer;
}

export interface LateAnswer {
  graceMs: number;
  onAnswer: (response: ApiResponse) => void;
}

/** Per-call options of the typed helpers. */
export interface RequestOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  correlationId?: string;
  freshConnection?: boolean;
  lateAnswer?: LateAnswer;
}

export interface ApiResponse {
  operation: Operation;
  method: string;
  /** The path as called, below the base URL. */
  path: string;
  /** Null when no complete response arrived (any `transportError`). */
  statusCode: number | null;
  /** Lower-cased names, one value each (repeats joined with `, `); whatever arrived. */
  headers: Record<string, string>;
  /** Parsed JSON, or undefined (no body, or a `bodyError`). */
  body: unknown;
  bodyError: BodyError | null;
  /** Bytes of the body as it arrived (at most the client's cap); only with a status code. */
  bodyBytes?: number;
  /** Start of the body, sanitized, at most 200 characters; only with a `bodyError`. */
  bodySnippet: string | null;
  transportError: TransportError | null;
  /**
   * Monotonic, to the body fully read (or the failure), from the moment the call reached the
   * network: when it opened its connection, that connection's lookup (a host name) or first
   * connection attempt (an IP literal); on a kept-alive connection, the start of writing the
   * request. A call that reached neither is timed from when undici took it. See `timing.ts`.
   */
  durationMs: number;
  phases: PhaseTimings;
  /**
   * Whether this call opened its connection (its `connect` phase was measured) rather than reuse
   * a kept-alive one. False also when the dispatcher does not measure connections.
   */
  connectionOpened: boolean;
  /** Largest `dur` of the `Server-Timing` header, in ms. */
  serverTimingMs: number | null;
  /** The API's `request_id` from an error body (status >= 400). */
  requestId: string | null;
  /** The API's `message` from an error body (status >= 400), sanitized and bounded. */
  errorMessage?: string | null;
  /**
   * True when the call gave up at its deadline (or abort) with `lateAnswer` set: the answer is
   * still being read and will reach `lateAnswer.onAnswer`.
   */
  answerPending?: true;
  /**
   * `Retry-After` (seconds or HTTP-date) as milliseconds from now; a header that is present but
   * negative or unparsable reads as the spec's 60 s. Null when absent. Not clamped: the gate is.
   */
  retryAfterMs: number | null;
}

/** The one call a check makes through its context's client. */
export interface ApiTransport {
  /** Never throws for HTTP or network failures: they come back as data (`api/client.ts`). */
  request(call: ApiCall): Promise<ApiResponse>;
}
