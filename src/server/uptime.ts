/**
 * `/api/uptime` and the badges (docs/metrics.md, "/api/uptime" and "Badges"), read from the
 * uptime record (`uptime-store.ts`). Only configured environments are served: a removed one's
 * history stays on disk until it ages out, and answers 404 here.
 */
import type { Express, Request, Response } from 'express';
import { isProblem, singleParameters, type QueryProblem } from './query.js';
import {
  RETENTION_DAYS,
  UPTIME_WINDOWS,
  type Incident,
  type UptimeStore,
  type UptimeWindow,
} from './uptime-store.js';

export interface UptimeSource {
  store: UptimeStore;
  /**
   * The configured environments (they change on reload) and the interval of the availability
   * check in each, which says when its last run is stale.
   */
  environments: () => ReadonlyArray<{ name: string; intervalMs: number }>;
  /** Whether the environment is inside a maintenance window now. */
  inMaintenance: (environment: string) => boolean;
  /** Wall clock in ms; injectable for tests. */
  now?: () => number;
}

export interface IncidentJson {
  check: string;
  cause: string;
  start: string;
  /** Null while it lasts. */
  end: string | null;
  /** To its end, or to now while it lasts. */
  duration_seconds: number;
  ongoing: boolean;
  /** Failed scheduled runs in it. */
  failed: number;
  /** It began inside a maintenance window. */
  maintenance: boolean;
}

export interface UptimeEnvironmentJson {
  environment: string;
  /** Availability (0–1) per window; null when the window has no run outside maintenance. */
  uptime: Record<UptimeWindow, number | null>;
  /** Oldest first, today (UTC) last. */
  days: Array<{
    date: string;
    availability: number | null;
    runs: number;
    failed: number;
    maintenance_runs: number;
    p50_ms: number | null;
    p95_ms: number | null;
  }>;
  /** The latest first. */
  incidents: IncidentJson[];
}

export interface UptimeDocument {
  generated_at: string;
  /** The check whose scheduled runs these are; null when the build has none. */
  check: string | null;
  environments: UptimeEnvironmentJson[];
}

/** Six significant decimals: 99.9999 % is as fine as a 90-day count of minutes goes. */
function ratio(value: number | null): number | null {
  return value === null ? null : Math.round(value * 1e6) / 1e6;
}

function incidentJson(incident: Incident, now: number): IncidentJson {
  const end = incident.end;
  return {
    check: incident.check,
    cause: incident.cause,
    start: new Date(incident.start).toISOString(),
    end: end === null ? null : new Date(end).toISOString(),
    duration_seconds: Math.max(0, Math.round(((end ?? now) - incident.start) / 1000)),
    ongoing: end === null,
    failed: incident.failed,
    maintenance: incident.maintenance,
  };
}

/** The `/api/uptime` document of the configured environments (or one of them). */
export function uptimeDocument(
  source: UptimeSource,
  query: { environment?: string; days: number },
): UptimeDocument {
  const { store } = source;
  const now = (source.now ?? Date.now)();
  const check = store.availabilityCheckName;
  const environments = source
    .environments()
    .filter((env) => query.environment === undefined || env.name === query.environment)
    .map(({ name }): UptimeEnvironmentJson => {
      const uptime = {} as Record<UptimeWindow, number | null>;
      for (const w of UPTIME_WINDOWS) {
        uptime[w] = check === null ? null : ratio(store.window(name, check, w).availability);
      }
      return {
        environment: name,
        uptime,
        days:
          check === null
            ? []
            : store.days(name, check, query.days).map((d) => ({
                date: d.date,
                availability: ratio(d.availability),
                runs: d.runs,
                failed: d.failed,
                maintenance_runs: d.maintenance_runs,
                p50_ms: d.p50_ms,
                p95_ms: d.p95_ms,
              })),
        incidents: store.incidents(name, query.days).map((i) => incidentJson(i, now)),
      };
    });
  return { generated_at: new Date(now).toISOString(), check, environments };
}

/** `?environment=&days=`: a bad parameter is a 400 naming it, an unknown environment a 404. */
export function uptimeQuery(
  raw: Request['query'],
  source: UptimeSource,
): { environment?: string; days: number } | QueryProblem {
  const params = singleParameters(raw, ['environment', 'days'] as const);
  if (isProblem(params)) return params;
  let days = RETENTION_DAYS;
  if (params.days !== undefined) {
    const n = /^\d{1,3}$/.test(params.days) ? Number(params.days) : 0;
    if (n < 1 || n > RETENTION_DAYS) {
      return { problem: `days must be an integer from 1 to ${RETENTION_DAYS}`, status: 400 };
    }
    days = n;
  }
  if (params.environment !== undefined) {
    if (!configured(source, params.environment)) {
      return { problem: 'no such environment', status: 404 };
    }
    return { environment: params.environment, days };
  }
  return { days };
}

function configured(source: UptimeSource, name: string): boolean {
  return source.environments().some((env) => env.name === name);
}

/** The status badge's states: text first, colour second. */
export type BadgeState = 'up' | 'down' | 'maintenance' | 'stale' | 'no data';

/** What the status badge says about an environment now. */
export function badgeState(source: UptimeSource, environment: string): BadgeState {
  if (source.inMaintenance(environment)) return 'maintenance';
  const last = source.store.last(environment);
  if (last === null) return 'no data';
  const interval = source.environments().find((env) => env.name === environment)?.intervalMs ?? 0;
  const now = (source.now ?? Date.now)();
  // Three missed runs, as the page's headline counts stale.
  if (interval > 0 && now - last.t > 3 * interval + 5000) return 'stale';
  return last.state === 'unknown' ? 'no data' : last.state;
}

/** Colours with white text at 4.5:1 or better. */
const COLOURS = {
  good: '#1a7f37',
  fair: '#7d5a00',
  bad: '#c4212c',
  info: '#0a5cc7',
  none: '#5f6770',
  label: '#444d56',
} as const;

const STATE_COLOURS: Record<BadgeState, string> = {
  up: COLOURS.good,
  down: COLOURS.bad,
  maintenance: COLOURS.info,
  stale: COLOURS.none,
  'no data': COLOURS.none,
};

/** `99.93%`: truncated, never rounded up to a better figure; `no data` without runs. */
export function percent(availability: number | null): string {
  if (availability === null) return 'no data';
  if (availability >= 1) return '100%';
  return `${(Math.floor(availability * 10_000) / 100).toFixed(2)}%`;
}

function uptimeColour(availability: number | null): string {
  if (availability === null) return COLOURS.none;
  if (availability >= 0.995) return COLOURS.good;
  if (availability >= 0.99) return COLOURS.fair;
  return COLOURS.bad;
}

/** The longest environment name a badge shows; longer ones end in `…` (the title has it whole). */
export const MAX_NAME_CHARS = 20;

function escapeXml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
  );
}

function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** Approximate advance of 11 px Verdana per character, so text never overflows its half. */
function textWidth(text: string): number {
  let width = 0;
  for (const c of text) {
    if (/[ijlI.,:;'!|]/.test(c)) width += 3.8;
    else if (/[mwMW%…]/.test(c)) width += 10.5;
    else if (/[A-Z0-9]/.test(c)) width += 7.6;
    else width += 6.8;
  }
  return Math.ceil(width);
}

/**
 * A flat two-part badge (label | value), 20 px high, in the common shape of README badges. The
 * value is words, so no meaning rests on its colour; both parts are escaped text.
 */
export function renderBadge(
  environment: string,
  suffix: string,
  value: string,
  colour: string,
): string {
  const label = `${truncate(environment, MAX_NAME_CHARS)}${suffix}`;
  const left = escapeXml(label);
  const right = escapeXml(value);
  const lw = textWidth(label) + 12;
  const rw = textWidth(value) + 12;
  const w = lw + rw;
  const title = escapeXml(`${environment}${suffix}: ${value}`);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${title}">` +
    `<title>${title}</title>` +
    `<rect width="${lw}" height="20" fill="${COLOURS.label}"/>` +
    `<rect x="${lw}" width="${rw}" height="20" fill="${colour}"/>` +
    `<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle">` +
    `<text x="${lw / 2}" y="14">${left}</text>` +
    `<text x="${lw + rw / 2}" y="14">${right}</text>` +
    `</g></svg>\n`
  );
}

function sendBadge(res: Response, svg: string, maxAgeSeconds: number): void {
  res.set({
    'Content-Type': 'image/svg+xml; charset=utf-8',
    // Short: a badge in a README or a wiki follows the state within a minute or so.
    'Cache-Control': `public, max-age=${maxAgeSeconds}`,
    // Badges are meant to be embedded on other sites' pages; the rest of the server is not.
    'Cross-Origin-Resource-Policy': 'cross-origin',
  });
  res.send(svg);
}

/** Routes `/badge/<environment>.svg` and `/badge/<environment>/uptime.svg`. */
export function badgeRoutes(app: Express, source: UptimeSource): void {
  const refuse = (res: Response, problem: QueryProblem): void => {
    res.status(problem.status).json({ error: problem.problem });
  };
  app.get('/badge/:environment.svg', (req, res) => {
    const params = singleParameters(req.query, [] as const);
    if (isProblem(params)) return refuse(res, params);
    const environment = req.params.environment;
    if (!configured(source, environment)) {
      return refuse(res, { problem: 'no such environment', status: 404 });
    }
    const state = badgeState(source, environment);
    sendBadge(res, renderBadge(environment, '', state, STATE_COLOURS[state]), 30);
  });
  app.get('/badge/:environment/uptime.svg', (req, res) => {
    const params = singleParameters(req.query, ['window'] as const);
    if (isProblem(params)) return refuse(res, params);
    const window = params.window ?? '30d';
    if (!(UPTIME_WINDOWS as readonly string[]).includes(window)) {
      return refuse(res, {
        problem: `window must be one of ${UPTIME_WINDOWS.join(', ')}`,
        status: 400,
      });
    }
    const environment = req.params.environment;
    if (!configured(source, environment)) {
      return refuse(res, { problem: 'no such environment', status: 404 });
    }
    const check = source.store.availabilityCheckName;
    const availability =
      check === null
        ? null
        : source.store.window(environment, check, window as UptimeWindow).availability;
    sendBadge(
      res,
      renderBadge(
        environment,
        ` uptime ${window}`,
        percent(availability),
        uptimeColour(availability),
      ),
      60,
    );
  });
}
