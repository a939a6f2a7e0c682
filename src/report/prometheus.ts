/**
 * A client of the Prometheus HTTP API as every compatible server answers it (Prometheus, Mimir,
 * Thanos, VictoriaMetrics): GET /api/v1/query and /api/v1/query_range only, nothing else. Long
 * ranges are split into chunks of at most `MAX_POINTS` points, so a 90-day report stays under the
 * servers' limit of points per series (docs/cli.md, "report").
 */

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

export interface ClientOptions {
  /** Per request. */
  timeoutMs?: number;
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

export function prometheusClient(baseUrl: string, options: ClientOptions = {}): PrometheusClient {
  let base: URL;
  try {
    base = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  } catch {
    throw new ReportError(`--prometheus: not a URL: ${baseUrl}`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new ReportError(`--prometheus: not an http(s) URL: ${baseUrl}`);
  }
  const timeoutMs = options.timeoutMs ?? 120_000;

  async function get(path: string, params: Record<string, string>): Promise<unknown> {
    const url = new URL(path, base);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const where = `${base.origin}${url.pathname}`;
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new ReportError(`cannot reach ${where}: ${causeOf(err)}`);
    }
    const text = await response.text().catch((err: unknown) => {
      throw new ReportError(`${where}: reading the answer failed: ${causeOf(err)}`);
    });
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
    const answer = body as {
      status: unknown;
      error?: unknown;
      errorType?: unknown;
      data?: unknown;
    };
    if (answer.status !== 'success') {
      const detail = [answer.errorType, answer.error].filter((x) => typeof x === 'string');
      throw new ReportError(
        `${where} answered HTTP ${response.status}, status ${String(answer.status)}` +
          (detail.length > 0 ? `: ${oneLine(detail.join(': '))}` : ''),
      );
    }
    return answer.data;
  }

  return {
    async queryRange(expr, start, end, step) {
      const chunks = rangeChunks(start, end, step, options.maxPoints);
      const merged = new Map<string, RangeSeries>();
      for (const [i, [from, to]] of chunks.entries()) {
        options.onRequest?.({ expr, chunk: i + 1, chunks: chunks.length });
        const data = await get('api/v1/query_range', {
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

function causeOf(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError') return 'no answer in time';
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as { code?: unknown }).code;
      return oneLine(typeof code === 'string' ? `${code} ${cause.message}` : cause.message);
    }
    return oneLine(err.message);
  }
  return oneLine(String(err));
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}
