import { get as httpGet } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { Gauge, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { Recorder } from '../../src/metrics/recorder.js';
import { createServerApp, type ServerAppOptions } from '../../src/server/app.js';
import { StatusHistory, type StatusDocument } from '../../src/server/status.js';
import { lifecycleResult, pingResult, testMetrics } from '../metrics/fixtures.js';
import { serve, type Served } from './serve.js';
import { CHECK_LIST } from '../../src/checks/index.js';

/** The Accept header Prometheus 2.42 sends when scraping. */
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
const OPENMETRICS = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

interface Harness {
  url: string;
  logs: Array<Record<string, unknown>>;
  status: StatusHistory;
  setReady(ready: boolean): void;
}

async function start(overrides: Partial<ServerAppOptions> = {}): Promise<Harness> {
  const metrics = testMetrics();
  const recorder = new Recorder(metrics);
  const status = new StatusHistory({ checks: CHECK_LIST, environments: ['production', 'sandbox'] });
  // Recent start times: the history drops failures older than a day.
  const now = Date.now();
  for (const result of [
    pingResult('ok', { startedAt: now - 60_000 }),
    pingResult('timeout', { startedAt: now }),
    lifecycleResult('success', { startedAt: now - 30_000 }),
  ]) {
    recorder.recordResult(result);
    status.add(result);
  }
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'debug' },
    { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
  let ready = false;
  const app = createServerApp({
    registry: metrics.registry,
    status,
    isReady: () => ready,
    logger,
    ...overrides,
  });
  served = await serve(app);
  return { url: served.url, logs, status, setReady: (r) => (ready = r) };
}

describe('GET /metrics', () => {
  it('serves Prometheus text by default', async () => {
    const { url } = await start();
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(PROMETHEUS_TEXT);
    const body = await res.text();
    expect(body).toContain('# TYPE isa_ping_attempts_total counter');
    expect(body).toContain('isa_ping_attempts_total{environment="production",result="ok"} 1');
    expect(body).toContain('isa_ping_up{environment="production"} 0');
    expect(body).not.toContain('# EOF');
  });

  it('serves OpenMetrics when Accept asks for it, as Prometheus does', async () => {
    const { url } = await start();
    for (const accept of [PROMETHEUS_ACCEPT, 'application/openmetrics-text']) {
      const res = await fetch(`${url}/metrics`, { headers: { accept } });
      expect(res.headers.get('content-type'), accept).toBe(OPENMETRICS);
      expect(res.headers.get('vary')).toMatch(/accept/i);
      const body = await res.text();
      expect(body.endsWith('\n# EOF\n'), accept).toBe(true);
      // OpenMetrics names the counter family without _total and its samples with it.
      expect(body).toContain('# TYPE isa_ping_attempts counter');
      expect(body).toContain('isa_ping_attempts_total{environment="production",result="ok"} 1');
      checkOpenMetricsStructure(body);
    }
  });

  it('gzips the metrics for a client that takes gzip, as Prometheus does', async () => {
    const { url } = await start();
    const get = async (encoding: string) => {
      const res = await rawGet(`${url}/metrics`, { 'accept-encoding': encoding });
      return { ...res, text: res.encoding === 'gzip' ? gunzipSync(res.body).toString() : '' };
    };
    const plain = await rawGet(`${url}/metrics`, { 'accept-encoding': 'identity' });
    expect(plain.encoding).toBeUndefined();
    const zipped = await get('gzip');
    expect(zipped.encoding).toBe('gzip');
    expect(zipped.vary).toMatch(/accept-encoding/i);
    expect(zipped.body.length).toBeLessThan(plain.body.length / 4);
    // Same document (the process metrics aside, which move between two scrapes).
    const isa = (text: string) => text.split('\n').filter((l) => l.includes('isa_'));
    expect(isa(zipped.text)).toEqual(isa(plain.body.toString()));
  });

  it('prefers Prometheus text when Accept ranks it higher or names nothing it knows', async () => {
    const { url } = await start();
    for (const accept of [
      'text/plain;version=0.0.4',
      'text/plain;q=1,application/openmetrics-text;q=0.5',
      '*/*',
      'application/json',
    ]) {
      const res = await fetch(`${url}/metrics`, { headers: { accept } });
      expect(res.headers.get('content-type'), accept).toBe(PROMETHEUS_TEXT);
      await res.text();
    }
  });

  it('keeps _total on counters in Prometheus text after an OpenMetrics scrape', async () => {
    // prom-client renames counters in place when a registry renders OpenMetrics; the server must not.
    const { url } = await start();
    await (await fetch(`${url}/metrics`, { headers: { accept: PROMETHEUS_ACCEPT } })).text();
    const body = await (await fetch(`${url}/metrics`)).text();
    expect(body).toContain('# TYPE isa_ping_attempts_total counter');
    expect(body).toContain('# TYPE isa_lifecycle_runs_total counter');
    expect(body).not.toMatch(/^# TYPE isa_ping_attempts counter$/m);
  });

  it('answers concurrent scrapes in both formats each in its own format', async () => {
    const { url } = await start();
    const scrapes = Array.from({ length: 20 }, async (_, i) => {
      const om = i % 2 === 0;
      const res = await fetch(
        `${url}/metrics`,
        om ? { headers: { accept: PROMETHEUS_ACCEPT } } : {},
      );
      const body = await res.text();
      return { om, type: res.headers.get('content-type'), body };
    });
    for (const { om, type, body } of await Promise.all(scrapes)) {
      expect(type).toBe(om ? OPENMETRICS : PROMETHEUS_TEXT);
      expect(body.endsWith('# EOF\n')).toBe(om);
      expect(body).toContain(
        om ? '# TYPE isa_ping_attempts counter' : '# TYPE isa_ping_attempts_total counter',
      );
    }
  });

  it('answers 500 and logs the error when collecting a metric fails, and keeps serving', async () => {
    const registry = new Registry();
    new Gauge({
      name: 'broken_gauge',
      help: 'A gauge whose collect fails.',
      registers: [registry],
      collect() {
        throw new Error('collect exploded');
      },
    });
    const { url, logs } = await start({ registry });
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'internal error' });
    const logged = logs.find((l) => l.msg === 'request failed');
    expect(logged?.level).toBe(50);
    expect((logged?.err as { message?: string } | undefined)?.message).toBe('collect exploded');
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});

describe('health and readiness', () => {
  it('/healthz answers 200 ok, also to HEAD', async () => {
    const { url } = await start();
    const res = await fetch(`${url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok\n');
    expect((await fetch(`${url}/healthz`, { method: 'HEAD' })).status).toBe(200);
  });

  it('/readyz follows isReady: 503 before, 200 while ready, 503 again during shutdown', async () => {
    const { url, setReady } = await start();
    const readyz = async () => {
      const res = await fetch(`${url}/readyz`);
      return [res.status, await res.text()];
    };
    expect(await readyz()).toEqual([503, 'not ready\n']);
    setReady(true);
    expect(await readyz()).toEqual([200, 'ready\n']);
    setReady(false);
    expect(await readyz()).toEqual([503, 'not ready\n']);
  });

  it('/readyz answers 503 and logs when isReady throws', async () => {
    const { url, logs } = await start({
      isReady: () => {
        throw new Error('probe broke');
      },
    });
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
    expect(logs.some((l) => l.msg === 'readiness check failed')).toBe(true);
  });
});

describe('GET /api/status', () => {
  it('serves the status document: per environment and check, last run and runs with steps', async () => {
    const { url } = await start();
    const res = await fetch(`${url}/api/status`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const doc = (await res.json()) as StatusDocument;
    expect(Date.parse(doc.generated_at)).not.toBeNaN();
    expect(Object.keys(doc.environments).sort()).toEqual(['production', 'sandbox']);
    const ping = doc.environments.production?.ping;
    expect(ping?.runs).toHaveLength(2);
    expect(ping?.last?.reason).toBe('timeout');
    expect(ping?.last?.steps[0]).toEqual({
      name: 'ping',
      method: 'GET',
      path: '/ping',
      status_code: null,
      duration_ms: 10_000,
      request_id: null,
      error: 'headers timeout',
    });
    expect(doc.environments.production?.lifecycle?.last?.qualify_status).toBe('available');
    expect(doc.environments.sandbox?.ping).toEqual({ last: null, runs: [] });
  });

  it('narrows the document to an environment, a check and an outcome', async () => {
    const { url } = await start();
    const doc = (await (
      await fetch(`${url}/api/status?environment=production&check=ping&outcome=pass`)
    ).json()) as StatusDocument;
    expect(Object.keys(doc.environments)).toEqual(['production']);
    const production = doc.environments.production!;
    expect(Object.keys(production)).toEqual(['ping']);
    // `last` stays the newest run; `runs` holds only the passes.
    expect(production.ping?.last?.reason).toBe('timeout');
    expect(production.ping?.runs.map((r) => r.outcome)).toEqual(['pass']);
  });

  it('bounds the runs of each check: the newest, 10 by default, at most 60', async () => {
    const status = new StatusHistory({
      checks: CHECK_LIST,
      environments: ['production'],
      failuresPerCheck: 100,
    });
    const now = Date.now();
    for (let i = 0; i < 70; i++) {
      status.add(pingResult('timeout', { startedAt: now - 70_000 + i * 1000 }));
    }
    const { url } = await start({ status });
    const runs = async (query: string) => {
      const doc = (await (await fetch(`${url}/api/status${query}`)).json()) as StatusDocument;
      return doc.environments.production?.ping?.runs ?? [];
    };
    expect(await runs('')).toHaveLength(10);
    const two = await runs('?limit=2');
    expect(two.map((r) => r.started_at)).toEqual([
      new Date(now - 1000).toISOString(),
      new Date(now - 2000).toISOString(),
    ]);
    expect(await runs('?limit=60')).toHaveLength(60);
  });

  it('refuses bad parameters with a message that names the parameter, not its value', async () => {
    const { url } = await start();
    for (const [query, status, message] of [
      ['limit=0', 400, 'limit must be an integer from 1 to 60'],
      ['limit=61', 400, 'limit must be an integer from 1 to 60'],
      ['limit=ten', 400, 'limit must be an integer from 1 to 60'],
      ['outcome=<b>', 400, 'outcome must be pass or fail'],
      ['environment=a&environment=b', 400, 'each parameter may be given once'],
      [
        'env=production',
        400,
        'unknown parameter; this endpoint takes environment, check, outcome, limit',
      ],
      ['environment=<nowhere>', 404, 'no such environment'],
      ['check=<nothing>', 404, 'no such check'],
    ] as const) {
      const res = await fetch(`${url}/api/status?${query}`);
      expect(res.status, query).toBe(status);
      expect(await res.json(), query).toEqual({ error: message });
    }
  });

  it('answers 500 and logs when the snapshot fails', async () => {
    const status = new StatusHistory({ checks: CHECK_LIST });
    status.snapshot = () => {
      throw new Error('snapshot broke');
    };
    const { url, logs } = await start({ status });
    const res = await fetch(`${url}/api/status`);
    expect(res.status).toBe(500);
    expect(logs.some((l) => l.msg === 'request failed')).toBe(true);
  });
});

describe('index and unknown paths', () => {
  it('answers unknown paths with a JSON 404 that does not echo the path', async () => {
    const { url } = await start();
    const res = await fetch(`${url}/metrics-and-<script>`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: string };
    expect(body.error).toBe('not found');
    expect(JSON.stringify(body)).not.toContain('script');
  });

  it('answers other methods on known paths with 405 and Allow', async () => {
    const { url } = await start();
    const res = await fetch(`${url}/metrics`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('does not announce the framework', async () => {
    const { url } = await start();
    expect((await fetch(`${url}/healthz`)).headers.get('x-powered-by')).toBeNull();
  });
});

/**
 * The structural rules of OpenMetrics that prom-client could get wrong: every sample belongs to a
 * declared family, counter families carry no _total while their samples do, one # EOF at the end.
 */
/** A GET with exactly these headers (fetch would add its own Accept-Encoding and decode). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ body: Buffer; encoding: string | undefined; vary: string | undefined }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          body: Buffer.concat(chunks),
          encoding: res.headers['content-encoding'],
          vary: res.headers['vary'],
        }),
      );
    }).on('error', reject);
  });
}

function checkOpenMetricsStructure(body: string): void {
  const lines = body.split('\n');
  expect(lines.at(-1)).toBe('');
  expect(lines.at(-2)).toBe('# EOF');
  const types = new Map<string, string>();
  for (const line of lines.slice(0, -2)) {
    expect(line, 'no blank lines in OpenMetrics').not.toBe('');
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      expect(types.has(type[1]!), `family ${type[1]} declared once`).toBe(false);
      types.set(type[1]!, type[2]!);
      if (type[2] === 'counter') expect(type[1]).not.toMatch(/_total$/);
      continue;
    }
    if (line.startsWith('#')) {
      expect(line).toMatch(/^# (HELP|UNIT) /);
      continue;
    }
    const name = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line)?.[1] ?? '';
    const family = [...types.keys()].find(
      (f) =>
        name === f ||
        (types.get(f) === 'counter' && name === `${f}_total`) ||
        (types.get(f) === 'histogram' &&
          /^(_bucket|_sum|_count)$/.test(name.slice(f.length)) &&
          name.startsWith(f)),
    );
    expect(family, `sample ${name} has a declared family`).toBeDefined();
    if (types.get(family!) === 'counter') expect(name).toMatch(/_total$/);
  }
}
