/**
 * A client of the Prometheus HTTP API as every compatible server answers it (Prometheus, Mimir,
 * Thanos, VictoriaMetrics): GET /api/v1/query and /api/v1/query_range only, nothing else. Long
 * ranges are split into chunks of at most `MAX_POINTS` points, so a 90-day report stays under the
 * servers' limit of points per series (docs/cli.md, "report").
 */
import { plainText } from './text.js';

/** Prometheus refuses a query_range of more than 11,000 points per series. */
export const MAX_POINTS = 11_000;

/** A runtime failure of the report: one line for stderr, exit 1 (docs/cli.md). */
export class ReportError extends Error {}

/** One series of a range answer: its labels and its points, in seconds and numbers. */
export interface RangeSeries {
  labels: Record<string, string>;
  points: Array<[number, number]>;
}

export interface PrometheusClient {
  /**
   * Every point of `expr` from `start` to `end` (seconds, inclusive) every `step` seconds, asked
   * in chunks; the series of all chunks merged by their labels, points in time order.
   */
  queryRange(expr: string, start: number, end: number, step: number): Promise<RangeSeries[]>;
}

/** How long one request may take by default: a silent server fails the report after this. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The largest answer read, in bytes after decompression: a larger one fails the report. */
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export interface ClientOptions {
  /** Per request (default `DEFAULT_TIMEOUT_MS`). */
  timeoutMs?: number;
  /** The largest answer read, after decompression (default `DEFAULT_MAX_ANSWER_BYTES`). */
  maxAnswerBytes?: number;
  /**
   * The password of basic auth, e.g. from a file; the user is the URL's. A password in the URL
   * itself is used when this is absent. Either is sent only as an Authorization header.
   */
  password?: string;
  /** Called before each request, e.g. for progress lines. */
  onRequest?: (info: { expr: string; chunk: number; chunks: number }) => void;
  maxPoints?: number;
}

/** The chunks of a range: each [start, end] holds at most `maxPoints` step-aligned points. */
export function rangeChunks(
  start: number,
  end: number,
  step: number,
  maxPoints = MAX_POINTS,
): Array<[number, number]> {
  if (!(step > 0)) throw new Error('step must be positive');
  const chunks: Array<[number, number]> = [];
  const span = (maxPoints - 1) * step;
  for (let from = start; from <= end; from += span + step) {
    chunks.push([from, Math.min(end, from + span)]);
  }
  return chunks;
}

/** A Prometheus base URL, its credentials apart: they are sent, never shown. */
interface Target {
  base: URL;
  authorization: string | null;
  /** Removes the credentials from any text about a request: an error, a cause. */
  scrub: (text: string) => string;
}

/**
 * Parses `--prometheus`: user info (`http://user:password@host/`) becomes basic auth and leaves
 * the URL, so no request, error or line printed carries it (docs/cli.md, "report").
 */
export function prometheusTarget(baseUrl: string, password?: string): Target {
  let base: URL;
  try {
    base = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  } catch {
    throw new ReportError(`--prometheus: not a URL: ${withoutUserInfo(baseUrl)}`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new ReportError(`--prometheus: not an http(s) URL: ${withoutUserInfo(baseUrl)}`);
  }
  const user = decodeURIComponent(base.username);
  const secret = password ?? decodeURIComponent(base.password);
  base.username = '';
  base.password = '';
  const authorization =
    user || secret ? `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}` : null;
  const secrets = [secret, base64Of(user, secret), encodeURIComponent(secret)].filter(
    (text) => text.length >= 3,
  );
  const scrub = (text: string): string =>
    secrets.reduce((out, hidden) => out.replaceAll(hidden, '***'), withoutUserInfo(text));
  return { base, authorization, scrub };
}

function base64Of(user: string, secret: string): string {
  return user || secret ? Buffer.from(`${user}:${secret}`).toString('base64') : '';
}

/** Text with the user info of any URL in it replaced. */
function withoutUserInfo(text: string): string {
  return text.replace(/(\w+:\/\/)[^/@\s]*@/g, '$1***@');
}

/**
 * Reads an answer's body up to `max` bytes after decompression, cancelling the rest: a huge
 * answer or a compression bomb fails the report instead of its memory.
 */
async function readCapped(response: Response, max: number, where: string): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > max) {
      await reader.cancel().catch(() => undefined);
      throw new ReportError(`${where}: the answer is larger than ${max} bytes; narrow the range`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A client of the Prometheus at `baseUrl`: its credentials go out only as an Authorization
 * header and never appear in an error (docs/cli.md, "report").
 */
export function prometheusClient(baseUrl: string, options: ClientOptions = {}): PrometheusClient {
  const { base, authorization, scrub } = prometheusTarget(baseUrl, options.password);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (authorization !== null) headers['authorization'] = authorization;
  const api: ApiConnection = {
    base,
    headers,
    scrub,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxAnswerBytes: options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
  };

  return {
    async queryRange(expr, start, end, step) {
      const chunks = rangeChunks(start, end, step, options.maxPoints);
      const merged = new Map<string, RangeSeries>();
      for (const [i, [from, to]] of chunks.entries()) {
        options.onRequest?.({ expr, chunk: i + 1, chunks: chunks.length });
        const data = await apiGet(api, 'api/v1/query_range', {
          query: expr,
          start: String(from),
          end: String(to),
          step: String(step),
        });
        for (const series of matrixOf(data, base)) {
          const key = labelKey(series.labels);
          const known = merged.get(key);
          if (known) known.points.push(...series.points);
          else merged.set(key, series);
        }
      }
      return [...merged.values()];
    },
  };
}

/** What every request to one Prometheus needs. */
interface ApiConnection {
  base: URL;
  headers: Record<string, string>;
  scrub: (text: string) => string;
  timeoutMs: number;
  maxAnswerBytes: number;
}

/** The `data` of a successful API answer to GET `path`; a ReportError for anything else. */
async function apiGet(
  api: ApiConnection,
  path: string,
  params: Record<string, string>,
): Promise<unknown> {
  const url = new URL(path, api.base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const where = `${api.base.origin}${url.pathname}`;
  const { response, text } = await fetchAnswer(api, url, where);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const type = response.headers.get('content-type') ?? 'no content type';
    throw new ReportError(
      `${where} is not a Prometheus API: HTTP ${response.status} with ${type.split(';')[0]}, not JSON`,
    );
  }
  if (typeof body !== 'object' || body === null || !('status' in body)) {
    throw new ReportError(`${where} is not a Prometheus API: JSON without "status"`);
  }
  const answer = body as { status: unknown; error?: unknown; errorType?: unknown; data?: unknown };
  if (answer.status !== 'success') {
    const detail = [answer.errorType, answer.error].filter((x) => typeof x === 'string');
    throw new ReportError(
      api.scrub(
        `${where} answered HTTP ${response.status}, status ${String(answer.status)}` +
          (detail.length > 0 ? `: ${oneLine(detail.join(': '))}` : ''),
      ),
    );
  }
  return answer.data;
}

/** The answer to one request and its body, read within the timeout and the size cap. */
async function fetchAnswer(
  api: ApiConnection,
  url: URL,
  where: string,
): Promise<{ response: Response; text: string }> {
  const signal = AbortSignal.timeout(api.timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, { headers: api.headers, signal });
  } catch (err) {
    throw new ReportError(api.scrub(`cannot reach ${where}: ${causeOf(err, api.timeoutMs)}`));
  }
  try {
    return { response, text: await readCapped(response, api.maxAnswerBytes, where) };
  } catch (err) {
    if (err instanceof ReportError) throw err;
    throw new ReportError(
      api.scrub(`${where}: reading the answer failed: ${causeOf(err, api.timeoutMs)}`),
    );
  }
}

function matrixOf(data: unknown, base: URL): RangeSeries[] {
  const d = data as { resultType?: unknown; result?: unknown } | null;
  if (d?.resultType !== 'matrix' || !Array.isArray(d.result)) {
    throw new ReportError(`${base.origin} is not a Prometheus API: a range query gave no matrix`);
  }
  return d.result.map((raw: unknown) => {
    const s = raw as { metric?: unknown; values?: unknown };
    if (typeof s.metric !== 'object' || s.metric === null || !Array.isArray(s.values)) {
      throw new ReportError(`${base.origin} is not a Prometheus API: a malformed series`);
    }
    return {
      labels: s.metric as Record<string, string>,
      points: (s.values as Array<[number, string]>).map(([t, v]) => [Number(t), Number(v)]),
    };
  });
}

export function labelKey(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function causeOf(err: unknown, timeoutMs: number): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError') return `no answer in ${timeoutMs / 1000} s`;
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as { code?: unknown }).code;
      return oneLine(typeof code === 'string' ? `${code} ${cause.message}` : cause.message);
    }
    return oneLine(err.message);
  }
  return oneLine(String(err));
}

/** A server's text on one line, with nothing that could drive the terminal (text.ts). */
function oneLine(text: string): string {
  return plainText(text).replace(/\s+/g, ' ').trim().slice(0, 300);
}
