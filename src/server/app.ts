/**
 * The daemon's HTTP app (contract §3): `/metrics`, `/healthz`, `/readyz`, `/api/status` and a small
 * index page. A factory without `listen()`, so tests and the daemon choose the socket.
 * Serving never throws: every failure is logged through the injected logger and answered with 500.
 */
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { pino, type Logger } from 'pino';
import type { Registry, RegistryContentType } from 'prom-client';
import { CONTENT_TYPES, OFFERED_MEDIA_TYPES, formatFor, renderMetrics } from './exposition.js';
import type { StatusHistory } from './status.js';

export interface ServerAppOptions {
  /** The registry to expose (either content type); it is read, never modified. */
  registry: Registry<RegistryContentType>;
  status: StatusHistory;
  /** True once config is loaded and schedules run; false before and during shutdown. */
  isReady: () => boolean;
  logger?: Logger;
}

const ENDPOINTS = [
  { path: '/metrics', what: 'Prometheus metrics (OpenMetrics when asked for by Accept)' },
  { path: '/healthz', what: 'liveness: 200 while the process runs' },
  { path: '/readyz', what: 'readiness: 200 while schedules run, 503 before and during shutdown' },
  { path: '/api/status', what: 'JSON: the last runs of every check with their steps' },
] as const;

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>isa-monitor</title></head>
<body>
<h1>isa-monitor</h1>
<ul>
${ENDPOINTS.map((e) => `<li><a href="${e.path.slice(1)}">${e.path}</a>: ${e.what}</li>`).join('\n')}
</ul>
</body>
</html>
`;

/** Creates the express app serving the daemon's endpoints (no `listen()`). */
export function createServerApp(opts: ServerAppOptions): Express {
  const log = opts.logger ?? pino({ enabled: false });
  const app = express();
  app.disable('x-powered-by');
  // Every answer is computed fresh; an ETag would only cost a hash of each scrape.
  app.set('etag', false);
  app.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });

  app.get('/', (_req, res) => {
    res.type('html').send(INDEX_HTML);
  });

  app.get('/metrics', async (req, res) => {
    const format = formatFor(req.accepts([...OFFERED_MEDIA_TYPES]));
    const body = await renderMetrics(opts.registry, format);
    res.vary('Accept');
    res.set('Content-Type', CONTENT_TYPES[format]).send(body);
  });

  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok\n');
  });

  app.get('/readyz', (_req, res) => {
    let ready = false;
    try {
      ready = opts.isReady();
    } catch (err) {
      // A broken readiness probe means "not ready", never a crashed request.
      log.error({ err }, 'readiness check failed');
    }
    res
      .status(ready ? 200 : 503)
      .type('text/plain')
      .send(ready ? 'ready\n' : 'not ready\n');
  });

  app.get('/api/status', (_req, res) => {
    res.json(opts.status.snapshot());
  });

  // Known paths answer other methods with 405 and the methods they allow.
  for (const path of ['/', ...ENDPOINTS.map((e) => e.path)]) {
    app.all(path, (_req, res) => {
      res.set('Allow', 'GET, HEAD').status(405).json({ error: 'method not allowed' });
    });
  }

  app.use((_req, res) => {
    // The request path is not echoed back: nothing from the request is reflected.
    res.status(404).json({ error: 'not found', endpoints: ENDPOINTS.map((e) => e.path) });
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // Express marks request faults (e.g. a malformed percent-encoding in the path) with a 4xx status.
    const status = clientErrorStatus(err);
    if (status === null) log.error({ err, method: req.method }, 'request failed');
    else log.debug({ err, method: req.method, status }, 'bad request');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(status ?? 500).json({ error: status === null ? 'internal error' : 'bad request' });
  });

  return app;
}

function clientErrorStatus(err: unknown): number | null {
  if (typeof err !== 'object' || err === null) return null;
  const status = (err as { status?: unknown; statusCode?: unknown }).status;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}
