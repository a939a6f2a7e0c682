/**
 * The report's Prometheus client against a fake API on loopback: what it asks (GET, chunked
 * query_range) and the one-line errors of answers that are not Prometheus's.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { buildReport } from '../../src/report/compute.js';
import { prometheusClient, ReportError } from '../../src/report/prometheus.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function fake(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server?.address() as AddressInfo).port}`;
}

async function failure(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ReportError);
  const message = (err as Error).message;
  expect(message).not.toContain('\n');
  return message;
}

const query = (url: string) => prometheusClient(url).queryRange('up', 0, 600, 60);

describe('report: Prometheus answers', () => {
  it('an HTML page is not a Prometheus API', async () => {
    const url = await fake((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Grafana</body></html>');
    });
    expect(await failure(query(url))).toMatch(/is not a Prometheus API: HTTP 200 with text\/html/);
  });

  it('bad JSON is not a Prometheus API', async () => {
    const url = await fake((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status": "succ');
    });
    expect(await failure(query(url))).toMatch(/not a Prometheus API/);
  });

  it('JSON that is not the API is refused', async () => {
    const url = await fake((_req, res) => res.end('{"hello": "world"}'));
    expect(await failure(query(url))).toMatch(/JSON without "status"/);
  });

  it('an error answer is said with its type and message on one line', async () => {
    const url = await fake((_req, res) => {
      res
        .writeHead(422, { 'content-type': 'application/json' })
        .end(
          '{"status":"error","errorType":"execution","error":"query processing would load\\ntoo many samples"}',
        );
    });
    expect(await failure(query(url))).toMatch(
      /answered HTTP 422, status error: execution: query processing would load too many samples/,
    );
  });

  it('a success without a matrix is refused', async () => {
    const url = await fake((_req, res) => {
      res.end('{"status":"success","data":{"resultType":"vector","result":[]}}');
    });
    expect(await failure(query(url))).toMatch(/gave no matrix/);
  });

  it('an unreachable URL is said in one line', async () => {
    const url = await fake(() => undefined);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    expect(await failure(query(url))).toMatch(/cannot reach .*ECONNREFUSED/);
  });

  it('an empty range is an error naming the range', async () => {
    const url = await fake((_req, res) => {
      res.end('{"status":"success","data":{"resultType":"matrix","result":[]}}');
    });
    const message = await failure(
      buildReport(prometheusClient(url), { from: 0, to: 3600, objectives: new Map() }),
    );
    expect(message).toBe(
      'no isa_ping_attempts_total series between 1970-01-01T00:00:00Z and 1970-01-01T01:00:00Z',
    );
  });

  it('asks long ranges in chunks of at most 11,000 points, with GET, under a path prefix', async () => {
    const asked: Array<{ method: string; path: string; points: number }> = [];
    const url = await fake((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      const start = Number(u.searchParams.get('start'));
      const end = Number(u.searchParams.get('end'));
      const step = Number(u.searchParams.get('step'));
      asked.push({ method: req.method ?? '', path: u.pathname, points: (end - start) / step + 1 });
      const values = [];
      for (let t = start; t <= end; t += step) values.push([t, String(t)]);
      res.end(
        JSON.stringify({
          status: 'success',
          data: { resultType: 'matrix', result: [{ metric: { a: '1' }, values }] },
        }),
      );
    });
    const ninetyDays = 90 * 86400;
    const series = await prometheusClient(`${url}/prometheus`).queryRange('up', 0, ninetyDays, 60);
    expect(asked).toHaveLength(12);
    expect(
      asked.every((a) => a.method === 'GET' && a.path === '/prometheus/api/v1/query_range'),
    ).toBe(true);
    expect(Math.max(...asked.map((a) => a.points))).toBeLessThanOrEqual(11_000);
    expect(series).toHaveLength(1);
    expect(series[0]?.points).toHaveLength(90 * 1440 + 1);
  });
});
