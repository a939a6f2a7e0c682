/**
 * The daemon's HTTP app (docs/metrics.md, "Endpoints"): `/metrics`, `/healthz`, `/readyz`,
 * `/api/status`, `/api/history`, `/api/uptime`, the badges under `/badge/` and the status page at
 * `/` (also `/status`). A factory without `listen()`, so
 * tests and the daemon choose the socket. Read-only: every path answers GET and HEAD only, but
 * `/-/reload` (reload-route.ts). With a web configuration (docs/deploy.md, "TLS and basic auth"),
 * its guard stands in front of every route and its headers go on every answer.
 * Serving never throws: every failure is logged through the injected logger and answered with 500.
 */
import { promisify } from 'node:util';
import { constants, gzip } from 'node:zlib';
import express, {
  type ErrorRequestHandler,
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { pino, type Logger } from 'pino';
import type { Registry, RegistryContentType } from 'prom-client';
import { CONTENT_TYPES, MetricsRenderer, OFFERED_MEDIA_TYPES, formatFor } from './exposition.js';
import { RunHistory, type HistoryQuery } from './history.js';
import { reloadRoutes, type ReloadRouteOptions } from './reload-route.js';
import { loadPage, pageRoutes, securityHeaders } from './page.js';
import {
  environmentAndCheck,
  isProblem,
  limitParameter,
  singleParameters,
  type QueryProblem,
} from './query.js';
import { MAX_STATUS_LIMIT, type StatusHistory, type StatusQuery } from './status.js';
import { badgeRoutes, uptimeDocument, uptimeQuery, type UptimeSource } from './uptime.js';
import { UptimeStore } from './uptime-store.js';

export interface ServerAppOptions {
  /** The registry to expose (either content type); it is read, never modified. */
  registry: Registry<RegistryContentType>;
  status: StatusHistory;
  /** The status page's history (`/api/history`); empty when absent. */
  history?: RunHistory;
  /** The uptime record behind `/api/uptime` and the badges; empty when absent. */
  uptime?: UptimeSource;
  /** Directory of the built page (index.html, app.js, ...); by default `dist/web/`. */
  webRoot?: string;
  /** True once config is loaded and schedules run; false before and during shutdown. */
  isReady: () => boolean;
  logger?: Logger;
  /** Runs before every route: basic authentication (front-door.ts). */
  guard?: RequestHandler;
  /** Response headers of the web configuration, set on every answer over the defaults. */
  responseHeaders?: () => Readonly<Record<string, string>>;
  /** `/-/reload`; without it, the route answers 403 as without `--web.enable-lifecycle`. */
  reloadRoute?: ReloadRouteOptions;
}

const ENDPOINTS = [
  { path: '/', what: 'the status page (also /status)' },
  { path: '/metrics', what: 'Prometheus metrics (OpenMetrics when asked for by Accept)' },
  { path: '/healthz', what: 'liveness: 200 while the process runs' },
  { path: '/readyz', what: 'readiness: 200 while schedules run, 503 before and during shutdown' },
  {
    path: '/api/status',
    what: 'JSON: the last runs of every check with their steps (?environment=&check=&outcome=&limit=)',
  },
  {
    path: '/api/history',
    what: 'JSON: the history behind the status page (?environment=&check=&after=&limit=)',
  },
  {
    path: '/api/uptime',
    what: 'JSON: 90 days of availability, uptime and incidents per environment (?environment=&days=)',
  },
  {
    path: '/api/drift',
    what: 'JSON: contract drift, the document of isa-monitor drift --json (null before the first)',
  },
  { path: '/badge/:environment.svg', what: 'SVG badge: the environment is up, down, ...' },
  {
    path: '/badge/:environment/uptime.svg',
    what: 'SVG badge: its uptime (?window=24h|7d|30d|90d)',
  },
] as const;

/** Most samples and runs per check one `/api/history` answer carries (`limit` default and cap). */
export const MAX_HISTORY_LIMIT = 5000;

/** Creates the express app serving the daemon's endpoints (no `listen()`). */
export function createServerApp(opts: ServerAppOptions): Express {
  const log = opts.logger ?? pino({ enabled: false });
  const app = express();
  app.disable('x-powered-by');
  // Every answer is computed fresh; an ETag would only cost a hash of each scrape.
  app.set('etag', false);
  app.use(answerHeaders(opts.responseHeaders));
  if (opts.guard !== undefined) app.use(opts.guard);
  reloadRoutes(app, opts.reloadRoute ?? RELOAD_DISABLED);
  pageRoutes(app, loadPage(opts.webRoot));
  metricsRoute(app, opts.registry, log);
  probeRoutes(app, opts.isReady, log);

  // The JSON documents, one registration each (ENDPOINTS lists their paths).
  const history = opts.history ?? emptyHistory();
  const uptime = opts.uptime ?? emptyUptime();
  const { status } = opts;
  jsonEndpoint(
    app,
    '/api/status',
    (raw) => statusQuery(raw, status),
    (q) => status.snapshot(q),
  );
  jsonEndpoint(
    app,
    '/api/history',
    (raw) => historyQuery(raw, history),
    (q) => history.document(q),
  );
  jsonEndpoint(
    app,
    '/api/uptime',
    (raw) => uptimeQuery(raw, uptime),
    (q) => uptimeDocument(uptime, q),
  );
  jsonEndpoint(
    app,
    '/api/drift',
    () => ({}),
    () => status.contractDriftDocument(),
  );
  badgeRoutes(app, uptime);

  refusedMethodsAndUnknownPaths(app);
  app.use(requestFailure(log));
  return app;
}

/** Without `reloadRoute`: `/-/reload` answers 403, as without `--web.enable-lifecycle`. */
const RELOAD_DISABLED: ReloadRouteOptions = {
  enabled: false,
  reload: () => Promise.resolve({ applied: false, problems: [] }),
};

function emptyHistory(): RunHistory {
  return new RunHistory({ checks: [], windowMs: 0, runs: 0, environments: [] });
}

function emptyUptime(): UptimeSource {
  return {
    store: UptimeStore.memory({ checks: [] }),
    environments: () => [],
    inMaintenance: () => false,
  };
}

/** The headers of every answer: no caching, the security defaults, then the web configuration's. */
function answerHeaders(responseHeaders: ServerAppOptions['responseHeaders']): RequestHandler {
  return (_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    securityHeaders(res);
    for (const [name, value] of Object.entries(responseHeaders?.() ?? {})) {
      res.set(name, value);
    }
    next();
  };
}

/** `/metrics`, in the format the scraper accepts, gzipped when it takes that. */
function metricsRoute(app: Express, registry: Registry<RegistryContentType>, log: Logger): void {
  const renderer = new MetricsRenderer(registry);
  // Write the label text of every series once now, not in the first scrape: at 1000 environments
  // that is half a second, which the daemon spends while its measurement thread starts.
  setImmediate(() => {
    renderer
      .render('prometheus')
      .catch((err: unknown) => log.debug({ err }, 'first render failed'));
  });
  app.get('/metrics', async (req, res) => {
    const format = formatFor(req.accepts([...OFFERED_MEDIA_TYPES]));
    const body = await renderer.render(format);
    res.vary('Accept');
    // Prometheus asks for gzip; at 1000 environments 12 MB of text go out as about 0.5 MB. The
    // fastest level: the text is so repetitive that higher levels gain little and cost 3× the CPU.
    await sendCompressible(req, res, body, CONTENT_TYPES[format], constants.Z_BEST_SPEED);
  });
}

/** `/healthz` (the process runs) and `/readyz` (schedules run). */
function probeRoutes(app: Express, isReady: () => boolean, log: Logger): void {
  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok\n');
  });

  app.get('/readyz', (_req, res) => {
    let ready = false;
    try {
      ready = isReady();
    } catch (err) {
      // A broken readiness probe means "not ready", never a crashed request.
      log.error({ err }, 'readiness check failed');
    }
    res
      .status(ready ? 200 : 503)
      .type('text/plain')
      .send(ready ? 'ready\n' : 'not ready\n');
  });
}

/** A JSON endpoint: a bad query answers its 4xx, the document goes out gzipped when taken. */
function jsonEndpoint<Query>(
  app: Express,
  path: string,
  parse: (raw: Request['query']) => Query | QueryProblem,
  build: (query: Query) => unknown,
): void {
  app.get(path, async (req, res) => {
    const query = parse(req.query);
    if (isProblem(query)) {
      res.status(query.status).json({ error: query.problem });
      return;
    }
    // Gzipped: at 1000 environments the status and history documents are megabytes, and 90
    // days of uptime are repetitive JSON a tenth the size gzipped.
    await sendCompressible(req, res, JSON.stringify(build(query)), 'application/json');
  });
}

/** Known paths answer other methods with 405 and the methods they allow; others 404. */
function refusedMethodsAndUnknownPaths(app: Express): void {
  for (const path of [...ENDPOINTS.map((e) => e.path), '/status', '/assets/:name']) {
    app.all(path, (_req, res) => {
      res.set('Allow', 'GET, HEAD').status(405).json({ error: 'method not allowed' });
    });
  }
  app.use((_req, res) => {
    // The request path is not echoed back: nothing from the request is reflected.
    res.status(404).json({ error: 'not found', endpoints: ENDPOINTS.map((e) => e.path) });
  });
}

/** A thrown or malformed request: 4xx for what Express marks as the client's fault, else 500. */
function requestFailure(log: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // Express marks request faults (e.g. a malformed percent-encoding in the path) with a 4xx status.
    const status = clientErrorStatus(err);
    if (status === null) log.error({ err, method: req.method }, 'request failed');
    else log.debug({ err, method: req.method, status }, 'bad request');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(status ?? 500).json({ error: status === null ? 'internal error' : 'bad request' });
  };
}

const gzipAsync = promisify(gzip);

/**
 * Sends a text body, gzipped when the client takes it and it is worth it: the full history and
 * the metrics of many environments are hundreds of kilobytes or more of repetitive text that
 * compresses tenfold or better.
 */
async function sendCompressible(
  req: Request,
  res: Response,
  text: string,
  contentType: string,
  level: number = constants.Z_DEFAULT_COMPRESSION,
): Promise<void> {
  res.vary('Accept-Encoding');
  res.set('Content-Type', contentType);
  if (text.length < 1024 || req.acceptsEncodings('gzip', 'identity') !== 'gzip') {
    res.send(text);
    return;
  }
  const body = await gzipAsync(text, { level });
  res.set('Content-Encoding', 'gzip').send(body);
}

/** The `/api/status` filters (docs/metrics.md). */
function statusQuery(raw: Request['query'], status: StatusHistory): StatusQuery | QueryProblem {
  const params = singleParameters(raw, ['environment', 'check', 'outcome', 'limit'] as const);
  if (isProblem(params)) return params;
  const scope = environmentAndCheck(
    params,
    (name) => status.hasEnvironment(name),
    (name) => status.hasCheck(name),
  );
  if (isProblem(scope)) return scope;
  const query: StatusQuery = { ...scope };
  if (params.outcome !== undefined) {
    if (params.outcome !== 'pass' && params.outcome !== 'fail') {
      return { problem: 'outcome must be pass or fail', status: 400 };
    }
    query.outcome = params.outcome;
  }
  if (params.limit !== undefined) {
    const limit = limitParameter(params.limit, MAX_STATUS_LIMIT);
    if (isProblem(limit)) return limit;
    query.limit = limit;
  }
  return query;
}

/** The `/api/history` filters (docs/metrics.md). */
function historyQuery(raw: Request['query'], history: RunHistory): HistoryQuery | QueryProblem {
  const params = singleParameters(raw, ['environment', 'check', 'after', 'limit'] as const);
  if (isProblem(params)) return params;
  const scope = environmentAndCheck(
    params,
    (name) => history.hasEnvironment(name),
    (name) => history.hasCheck(name),
  );
  if (isProblem(scope)) return scope;
  const query: HistoryQuery = { ...scope, limit: MAX_HISTORY_LIMIT };
  if (params.after !== undefined) {
    if (!/^\d{1,15}$/.test(params.after)) {
      return { problem: 'after must be a sequence number', status: 400 };
    }
    query.after = Number(params.after);
  }
  if (params.limit !== undefined) {
    const limit = limitParameter(params.limit, MAX_HISTORY_LIMIT);
    if (isProblem(limit)) return limit;
    query.limit = limit;
  }
  return query;
}

function clientErrorStatus(err: unknown): number | null {
  if (typeof err !== 'object' || err === null) return null;
  const status = (err as { status?: unknown; statusCode?: unknown }).status;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}
