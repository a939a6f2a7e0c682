/**
 * The simulator's express app: environment prefixes, rate limits, fault injection, credentials,
 * content negotiation, then the API routes, in that order — the order in which a real service's
 * load balancer, rate limiter and controllers would see a request.
 */
import { createHash, randomUUID } from 'node:crypto';
import express, {
  type ErrorRequestHandler,
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { pino, type Logger } from 'pino';
import { adminRoutes } from './admin.js';
import { installDriftFaults } from './drift-response.js';
import {
  FaultController,
  parseFaultHeader,
  type Fault,
  type SimEndpoint,
  type TerminalFault,
  type TimelineEntry,
} from './faults.js';
import {
  ctx,
  installServerTiming,
  isJsonContentType,
  sendError,
  sendRateLimited,
  sendRouteNotFound,
  sendStatusFault,
  sendUnsupportedMediaType,
  type SimContext,
} from './http.js';
import { SlidingWindowLimiter } from './rate-limit.js';
import { analyticsRoutes } from './routes/analytics.js';
import { referenceRoutes } from './routes/reference.js';
import { sessionRoutes } from './routes/sessions.js';
import { SimulatorState } from './state.js';

export interface SimulatorOptions {
  /** Accepted bearer keys (several allowed); anything else is a 401. */
  apiKeys: string[];
  /** Qualify resolution delay: realistic 20–30 s, fast 2–4 s (default fast). */
  mode?: 'fast' | 'realistic';
  /** Overrides `mode`: a fixed delay for each pending (or retry_later) stage. */
  qualifyDelayMs?: number;
  /** How long a new session takes to appear in analytics; default by `mode`: fast 0, realistic 60 s. */
  analyticsIngestDelayMs?: number;
  /** Per client IP and environment. Default 100 per second, 60 per minute on analytics. */
  rateLimit?: { perSecond: number; analyticsPerMinute: number };
  /** Scripted global faults over time (demo mode). */
  timeline?: TimelineEntry[];
  logger?: Logger;
  /** Clock (ms since epoch), default Date.now. */
  now?: () => number;
}

export interface Simulator {
  app: Express;
  state: SimulatorState;
  faults: FaultController;
}

/** The HTTP header that injects faults into one request. */
export const FAULT_HEADER = 'x-isa-sim-fault';

const ENV_PREFIX = /^\/env\/([A-Za-z0-9_.-]+)(\/[^?]*)?(\?.*)?$/;
const VIA_PREFIX = /^\/via\/([A-Za-z0-9_.-]+)(\/[^?]*)?(\?.*)?$/;

/** Which API operation a method and path address, or null for an unmatched route. */
export function classifyEndpoint(method: string, path: string): SimEndpoint | null {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  const m = method === 'HEAD' ? 'GET' : method;
  if (m === 'GET' && /^\/ping$/i.test(p)) return 'ping';
  if (m === 'POST' && /^\/sessions$/i.test(p)) return 'create_session';
  if (/^\/sessions\/[^/]+$/i.test(p))
    return m === 'GET' ? 'get_session' : m === 'DELETE' ? 'close_session' : null;
  if (m === 'GET' && /^\/sessions\/[^/]+\/services\/internet$/i.test(p)) return 'poll_services';
  if (m === 'GET' && /^\/service_providers$/i.test(p)) return 'service_providers';
  if (m === 'GET' && /^\/coverage$/i.test(p)) return 'coverage';
  if (m === 'GET' && /^\/analytics\/sessions(\/[^/]+)?$/i.test(p)) return 'analytics';
  return null;
}

/** The opaque client id of an API key: analytics ownership without keeping the key around. */
export function clientIdFor(apiKey: string): string {
  return `client_${createHash('sha256').update(apiKey).digest('hex').slice(0, 12)}`;
}

function qualifyDelay(options: SimulatorOptions): () => number {
  if (options.qualifyDelayMs !== undefined) {
    const fixed = options.qualifyDelayMs;
    return () => fixed;
  }
  const [min, max] = options.mode === 'realistic' ? [20_000, 30_000] : [2_000, 4_000];
  return () => min + Math.random() * (max - min);
}

/** Waits `ms`, or less if the client goes away first (then resolves false). */
function waitUnlessClosed(ms: number, res: Response): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(!res.destroyed);
  return new Promise((resolve) => {
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      res.off('close', onClose);
      resolve(true);
    }, ms);
    res.once('close', onClose);
  });
}

/**
 * Builds the simulator: an express app (not listening), its state and its fault controller.
 * Throws when an option (a timeline entry, say) is invalid.
 */
export function createSimulator(options: SimulatorOptions): Simulator {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? pino({ level: 'silent' });
  const state = new SimulatorState({
    now,
    qualifyDelayMs: qualifyDelay(options),
    analyticsIngestDelayMs:
      options.analyticsIngestDelayMs ?? (options.mode === 'realistic' ? 60_000 : 0),
  });
  const faults = new FaultController({
    now,
    ...(options.timeline ? { timeline: options.timeline } : {}),
  });
  const limiters = rateLimiters(options, now);

  const app = express();
  app.disable('x-powered-by');
  // Poll answers change over time; no ETag, so no client ever gets a 304 for a stale status.
  app.set('etag', false);

  app.use(requestContext(logger));
  app.use('/__sim', adminRoutes({ state, faults, now, onReset: () => limiters.reset() }));
  app.use(networkPathAndEnvironment);
  app.use(rateLimiting(limiters));
  app.use(faultInjection(faults, state, logger));
  app.use(credentialsAndNegotiation(new Set(options.apiKeys)));

  app.use(sessionRoutes(state, now));
  app.use(referenceRoutes(now));
  app.use(analyticsRoutes(state, now));

  app.use((req, res) => sendRouteNotFound(req, res));
  app.use(requestFailure(logger));

  return { app, state, faults };
}

/** The two rate limits: every request, and the stricter one of analytics. */
interface RateLimiters {
  global: SlidingWindowLimiter;
  analytics: SlidingWindowLimiter;
  reset(): void;
}

function rateLimiters(options: SimulatorOptions, now: () => number): RateLimiters {
  const rate = options.rateLimit ?? { perSecond: 100, analyticsPerMinute: 60 };
  const global = new SlidingWindowLimiter(rate.perSecond, 1000, now);
  const analytics = new SlidingWindowLimiter(rate.analyticsPerMinute, 60_000, now);
  return {
    global,
    analytics,
    reset: () => {
      global.reset();
      analytics.reset();
    },
  };
}

/** Gives each request its context, request id and Server-Timing, and logs it once answered. */
function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    installServerTiming(res);
    installDriftFaults(res);
    const context: SimContext = {
      requestId: randomUUID(),
      environment: 'default',
      via: null,
      endpoint: null,
      clientId: null,
      faults: null,
      logger,
    };
    Object.assign(res.locals, context);
    res.setHeader('X-Request-Id', context.requestId);
    res.on('finish', () => {
      logger.debug(
        {
          method: req.method,
          url: req.originalUrl,
          // The id the answer carries (header and error body): what a client reports back.
          requestId: ctx(res).requestId,
          environment: ctx(res).environment,
          via: ctx(res).via,
          status: res.statusCode,
          faults: ctx(res).faults?.applied,
        },
        'request',
      );
    });
    next();
  };
}

/**
 * `/via/<path>/...` is the same service reached over another network path (a second monitoring
 * location's way in): same state, its own rate-limit budget (another client network), and the
 * faults scoped to that path. `/env/<name>/...` serves the same API as `/` for the environment
 * <name>. Both prefixes are stripped, and the operation the rest addresses is noted.
 */
const networkPathAndEnvironment: RequestHandler = (req, res, next) => {
  const via = VIA_PREFIX.exec(req.url);
  if (via?.[1]) {
    ctx(res).via = via[1];
    req.url = `${via[2] ?? '/'}${via[3] ?? ''}`;
  }
  const match = ENV_PREFIX.exec(req.url);
  if (match?.[1]) {
    ctx(res).environment = match[1];
    req.url = `${match[2] ?? '/'}${match[3] ?? ''}`;
  }
  ctx(res).endpoint = classifyEndpoint(req.method, req.path);
  next();
};

function rateLimiting(limiters: RateLimiters): RequestHandler {
  return (req, res, next) => {
    // A network path stands for another client network, so it is another client here, as another
    // client IP would be.
    const client = `${ctx(res).environment}|${ctx(res).via ?? ''}|${req.socket.remoteAddress ?? 'unknown'}`;
    if (!limiters.global.tryAcquire(client)) return sendRateLimited(res);
    if (ctx(res).endpoint === 'analytics' && !limiters.analytics.tryAcquire(client))
      return sendRateLimited(res);
    next();
  };
}

/**
 * Resolves the request's faults (header, armed and timeline), waits out their latency, then ends
 * the request with its terminal fault, if any.
 */
function faultInjection(
  faults: FaultController,
  state: SimulatorState,
  logger: Logger,
): RequestHandler {
  return async (req, res, next) => {
    const context = ctx(res);
    let headerFaults: Fault[] = [];
    const header = req.get(FAULT_HEADER);
    if (header !== undefined) {
      const parsed = parseFaultHeader(header);
      if ('error' in parsed) return sendError(res, 400, parsed.error, { requestStatus: 'error' });
      headerFaults = parsed.faults;
    }
    context.faults = faults.resolve({
      environment: context.environment,
      via: context.via,
      endpoint: context.endpoint,
      headerFaults,
    });
    // Every request notices a stall, so its start is known to within one request.
    state.noteIngestionStall(
      context.environment,
      faults.inForce(context.environment, 'ingest_stall'),
    );
    // Background latency (the demo timeline adds some to every request) is not news; a fault
    // that ends the request is.
    if (context.faults.terminal) {
      logger.info(
        {
          endpoint: context.endpoint,
          environment: context.environment,
          via: context.via,
          faults: context.faults.applied,
        },
        'injecting faults',
      );
    }
    if (!(await waitUnlessClosed(context.faults.latencyMs, res))) return;
    const terminal = context.faults.terminal;
    if (terminal) return applyTerminalFault(terminal, context.endpoint, req, res);
    next();
  };
}

/**
 * Credentials and content negotiation, for API routes only: an unmatched route is answered by
 * the framework before any of this runs.
 */
function credentialsAndNegotiation(apiKeys: ReadonlySet<string>): RequestHandler {
  return (req, res, next) => {
    const context = ctx(res);
    if (context.endpoint === null) return next();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
    if (!match?.[1] || !apiKeys.has(match[1])) {
      return sendError(res, 401, 'Unauthorized: missing or invalid API key');
    }
    context.clientId = clientIdFor(match[1]);
    if (!req.accepts('application/json')) {
      return sendError(res, 406, 'Not acceptable: this API answers with application/json');
    }
    const contentType = req.get('content-type');
    if (contentType !== undefined && !isJsonContentType(contentType)) {
      return sendUnsupportedMediaType(res, contentType);
    }
    next();
  };
}

/** The answer to a body the parser refused, or to a route that threw. */
function requestFailure(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const type = (err as { type?: unknown } | null)?.type;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (type === 'entity.parse.failed')
      return sendError(res, 400, 'The request body is not valid JSON');
    if (type === 'entity.too.large') return sendError(res, 413, 'The request body is too large');
    logger.error({ err, url: req.originalUrl }, 'simulator request failed');
    sendError(res, 500, 'Internal server error', { requestStatus: 'error' });
  };
}

const MAINTENANCE_PAGE =
  '<!DOCTYPE html>\n<html>\n<head><title>Scheduled maintenance</title></head>\n' +
  '<body><h1>We&rsquo;ll be right back</h1><p>The service is undergoing scheduled maintenance.</p></body>\n</html>\n';

function applyTerminalFault(
  fault: TerminalFault,
  endpoint: string | null,
  req: Request,
  res: Response,
): void {
  switch (fault.kind) {
    case 'status':
      sendStatusFault(res, fault.status, fault.retryAfterSeconds, {
        ...(fault.message !== undefined ? { message: fault.message } : {}),
        ...(fault.requestId !== undefined ? { requestId: fault.requestId } : {}),
      });
      return;
    case 'hang':
      // Never answer: the socket stays open until the client gives up or the server closes.
      return;
    case 'reset':
      req.socket.destroy();
      return;
    case 'malformed':
      // Looks like JSON, is not: a successful answer's body cut off mid-way, so a client gets
      // past the status code to the body (201 for a session creation, 200 elsewhere).
      res
        .status(endpoint === 'create_session' ? 201 : 200)
        .type('application/json')
        .send('{"message":"ok","request_status":"ok","data":[{"provider_id":"1002');
      return;
    case 'html':
      res.status(200).type('html').send(MAINTENANCE_PAGE);
      return;
  }
}
