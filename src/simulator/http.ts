/**
 * HTTP plumbing shared by the simulator's routes: per-request context, the Server-Timing header,
 * and the response bodies of the spec's Errors section, each built in one place.
 */
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { z } from 'zod';
import {
  addressValidationUnavailableBodySchema,
  errorEnvelopeSchema,
  unsupportedMediaTypeBodySchema,
  type ErrorEnvelope,
  type RequestStatus,
} from '../api/schemas.js';
import type { RequestFaults, SimEndpoint } from './faults.js';

/** What the middleware learns about a request, kept in `res.locals`. */
export interface SimContext {
  requestId: string;
  /** `default` at the root, else the name in `/env/:name/`. */
  environment: string;
  /** The network path in `/via/:name/`, or null for a request that came the direct way. */
  via: string | null;
  endpoint: SimEndpoint | null;
  /** Opaque id of the authenticated API key (set by the auth middleware). */
  clientId: string | null;
  faults: RequestFaults | null;
  logger: Logger;
}

/** The request's context. */
export function ctx(res: Response): SimContext {
  return res.locals as unknown as SimContext;
}

/**
 * Adds `Server-Timing: sim;dur=<ms>` to every response, measured from the request's arrival to
 * the moment its head is written: the simulator's own processing time including injected
 * latency, so a client can subtract it from what it measured to see network and queueing time.
 */
export function installServerTiming(res: Response): void {
  const started = process.hrtime.bigint();
  const writeHead = res.writeHead;
  res.writeHead = function (this: Response, ...args: Parameters<Response['writeHead']>) {
    if (!this.headersSent) {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      this.setHeader('Server-Timing', `sim;dur=${ms.toFixed(3)}`);
    }
    return writeHead.apply(this, args);
  } as Response['writeHead'];
}

/**
 * Sends a JSON body after checking it against its schema from `schemas.ts`. A body that fails
 * its schema is a simulator bug: it is logged and answered with a 500 instead of going out wrong.
 */
export function sendValid<S extends z.ZodType>(
  res: Response,
  status: number,
  schema: S,
  body: z.input<S>,
): void {
  const check = schema.safeParse(body);
  if (!check.success) {
    ctx(res).logger.error(
      { issues: check.error.issues, status },
      'simulator built a response that fails its schema',
    );
    sendError(res, 500, 'Internal server error', { requestStatus: 'error' });
    return;
  }
  res.status(status).json(body);
}

export interface ErrorOptions {
  requestStatus?: RequestStatus;
  errors?: Record<string, string[]>;
  retryAfterSeconds?: number;
  /** Replaces the request's own id in the body (a `status` fault's hostile `requestId`). */
  requestId?: string;
}

/** Sends the common error envelope `{message, request_status, request_id}` (+ `errors`). */
export function sendError(
  res: Response,
  status: number,
  message: string,
  opts: ErrorOptions = {},
): void {
  const body: ErrorEnvelope = {
    message,
    request_status: opts.requestStatus ?? (status >= 500 ? 'error' : 'warning'),
    request_id: opts.requestId ?? ctx(res).requestId,
    ...(opts.errors ? { errors: opts.errors } : {}),
  };
  if (opts.retryAfterSeconds !== undefined)
    res.setHeader('Retry-After', String(opts.retryAfterSeconds));
  const check = errorEnvelopeSchema.safeParse(body);
  if (!check.success) throw new Error('error envelope fails its schema', { cause: check.error });
  res.status(status).json(body);
}

/** The 415 body `{error, message, status: 415}`. */
export function sendUnsupportedMediaType(res: Response, contentType: string | undefined): void {
  sendValid(res, 415, unsupportedMediaTypeBodySchema, {
    error: 'Unsupported Media Type',
    message: `Content-Type ${contentType ? JSON.stringify(contentType) : '(none)'} is not supported; send application/json`,
    status: 415,
  });
}

/** The session-creation 503 `{address_validation_unavailable: true}` with Retry-After. */
export function sendAddressValidationUnavailable(res: Response, retryAfterSeconds: number): void {
  res.setHeader('Retry-After', String(retryAfterSeconds));
  sendValid(res, 503, addressValidationUnavailableBodySchema, {
    address_validation_unavailable: true,
  });
}

/** Retry-After of a 429, per the spec. */
export const RATE_LIMIT_RETRY_AFTER_SECONDS = 60;

/** The 429 of the rate limiter (and of a `status: 429` fault). */
export function sendRateLimited(
  res: Response,
  retryAfterSeconds = RATE_LIMIT_RETRY_AFTER_SECONDS,
): void {
  sendError(res, 429, 'Rate limit exceeded; retry later', { retryAfterSeconds });
}

/**
 * True when a Content-Type header names JSON. Read from the header itself: express's `req.is`
 * answers null for a request without a body, and a GET declaring a non-JSON type is still a 415.
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || /^application\/[\w.-]+\+json$/.test(mediaType);
}

/** Values of an array query parameter, sent as `name[]` (the spec's form) or plain `name`. */
export function queryArray(req: Request, name: string): string[] {
  const query = req.query as Record<string, unknown>;
  return [query[`${name}[]`], query[name]].flatMap((v) =>
    v === undefined
      ? []
      : (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string'),
  );
}

/** True when the client's Accept header asks for JSON (explicitly, not by wildcard). */
export function acceptsJsonExplicitly(req: Request): boolean {
  const accept = req.get('accept') ?? '';
  return /application\/(json|[\w.+-]*\+json)/i.test(accept);
}

/**
 * The framework-default 404 of an unmatched route, which runs before any controller: JSON when
 * the client asks for JSON, an HTML page otherwise (wildcard or missing Accept).
 */
export function sendRouteNotFound(req: Request, res: Response): void {
  if (acceptsJsonExplicitly(req)) {
    res.status(404).json({ status: 404, error: 'Not Found' });
    return;
  }
  res
    .status(404)
    .type('html')
    .send(
      "<!DOCTYPE html>\n<html>\n<head><title>The page you were looking for doesn't exist (404)</title></head>\n" +
        "<body><h1>The page you were looking for doesn't exist.</h1>" +
        '<p>You may have mistyped the address or the page may have moved.</p></body>\n</html>\n',
    );
}

const STATUS_MESSAGES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized: missing or invalid API key',
  403: 'Forbidden',
  404: 'Not found',
  410: 'Session is closed',
  422: 'Unprocessable entity',
  429: 'Rate limit exceeded; retry later',
  500: 'Internal server error',
  503: 'Service temporarily unavailable',
};

/**
 * The body the real service gives for a status, used by `status` and `close_fail` faults: the
 * 415 and creation-503 special shapes, gateway HTML for 502 and 504 (they come from the load
 * balancer, not the application), and the common envelope for everything else.
 */
export function sendStatusFault(
  res: Response,
  status: number,
  retryAfterSeconds: number | undefined,
  envelope: { message?: string; requestId?: string } = {},
): void {
  const endpoint = ctx(res).endpoint;
  if (status === 415) {
    if (retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(retryAfterSeconds));
    sendUnsupportedMediaType(res, res.req.get('content-type'));
    return;
  }
  if (status === 503 && endpoint === 'create_session') {
    sendAddressValidationUnavailable(res, retryAfterSeconds ?? 30);
    return;
  }
  if (status === 502 || status === 504) {
    if (retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(retryAfterSeconds));
    const title = status === 502 ? '502 Bad Gateway' : '504 Gateway Time-out';
    res
      .status(status)
      .type('html')
      .send(
        `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n</body>\r\n</html>\r\n`,
      );
    return;
  }
  if (status === 429) {
    sendRateLimited(res, retryAfterSeconds ?? RATE_LIMIT_RETRY_AFTER_SECONDS);
    return;
  }
  sendError(res, status, envelope.message ?? STATUS_MESSAGES[status] ?? `HTTP ${status}`, {
    ...(envelope.requestId !== undefined ? { requestId: envelope.requestId } : {}),
    ...(status === 422 ? { errors: { base: ['address could not be processed'] } } : {}),
    ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
  });
}
