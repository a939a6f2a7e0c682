/**
 * The status page's static assets (built by `npm run build` from `web/` into `dist/web/`) and the
 * headers every answer of the daemon carries. The page is one HTML file, one script and one style
 * sheet, all from this server: no CDN, no inline script, nothing that leaves the machine.
 */
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { Express, Request, Response } from 'express';

/** The page's files and their media types; nothing else under `/assets/` is served. */
const ASSETS = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
} as const;

/**
 * Scripts and styles only from this origin, data only from its API; no inline script, no
 * framing, no forms, no plugins. The page builds its DOM with text nodes, so it never needs more.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Security headers for every answer: the API's JSON is no more to be sniffed or framed. */
export function securityHeaders(res: Response): void {
  res.set({
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Resource-Policy': 'same-origin',
  });
}

interface Asset {
  body: Buffer;
  /** The same body gzipped once at start-up, for clients that take it. */
  gzipped: Buffer;
  type: string;
}

interface PageFiles {
  html: Asset;
  assets: Map<string, Asset>;
}

function asset(body: Buffer, type: string): Asset {
  return { body, gzipped: gzipSync(body, { level: 9 }), type };
}

function sendAsset(req: Request, res: Response, file: Asset): void {
  res.vary('Accept-Encoding');
  res.set('Content-Type', file.type);
  if (req.acceptsEncodings('gzip', 'identity') === 'gzip') {
    res.set('Content-Encoding', 'gzip').send(file.gzipped);
  } else {
    res.send(file.body);
  }
}

/** Where `npm run build` puts the page: `dist/web/` beside the bundled `dist/cli.js`, or seen from `src/server/`. */
function defaultWebRoots(): string[] {
  return [
    fileURLToPath(new URL('./web/', import.meta.url)),
    fileURLToPath(new URL('../../dist/web/', import.meta.url)),
  ];
}

/** Reads the built page once; null when it was not built. */
export function loadPage(webRoot?: string): PageFiles | null {
  const root = [webRoot, ...(webRoot ? [] : defaultWebRoots())].find(
    (dir): dir is string => dir !== undefined && existsSync(`${dir}/index.html`),
  );
  if (root === undefined) return null;
  const assets = new Map<string, Asset>();
  for (const [name, type] of Object.entries(ASSETS)) {
    assets.set(name, asset(readFileSync(`${root}/${name}`), type));
  }
  return { html: asset(readFileSync(`${root}/index.html`), 'text/html; charset=utf-8'), assets };
}

/** Routes `/`, `/status` and `/assets/*` (GET and HEAD). */
export function pageRoutes(app: Express, page: PageFiles | null): void {
  const sendPage = (req: Request, res: Response): void => {
    if (page === null) {
      res
        .status(503)
        .type('text/plain')
        .send('The status page is not built: run `npm run build`. /api/status serves the data.\n');
      return;
    }
    sendAsset(req, res, page.html);
  };
  app.get('/', sendPage);
  app.get('/status', sendPage);
  app.get('/assets/:name', (req, res) => {
    const asset = page?.assets.get(req.params.name);
    if (asset === undefined) {
      res.status(404).json({ error: 'not found' });
      return;
    }
    sendAsset(req, res, asset);
  });
}
