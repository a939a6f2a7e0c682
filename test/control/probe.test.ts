/**
 * The control probe against real loopback servers: success, a wrong status, a hang and a refused
 * connection; and what it sends (never the API key or any header of the API client).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { probeOnce, startControlProbe, type ControlProbeOutcome } from '../../src/control/probe.js';
import { API_KEY } from '../support/harness.js';

const servers: Server[] = [];
/** Closes the servers started so far (their URLs then refuse connections). */
async function closeServers(): Promise<void> {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
}
afterEach(closeServers);

/** A server answering every request with `status` (or never, for `hang`); records headers. */
async function server(
  status: number | 'hang',
): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const s = createServer((req, res) => {
    seen.push(req.headers);
    if (status === 'hang') return;
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end('x'.repeat(100_000));
  });
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/health`, seen };
}

const config = (url: string, timeoutMs = 2_000) => ({ url, intervalMs: 30_000, timeoutMs });

describe('probeOnce', () => {
  it('reports ok for a 2xx and sends nothing of the API client: no key, no correlation id', async () => {
    const { url, seen } = await server(204);
    const outcome = await probeOnce(config(url), 'isa-monitor/test');
    expect(outcome.result).toBe('ok');
    expect(outcome.durationMs).toBeGreaterThan(0);
    expect(seen).toHaveLength(1);
    const headers = JSON.stringify(seen[0]);
    expect(headers).not.toContain(API_KEY);
    expect(
      Object.keys(seen[0] ?? {}).filter((h) => /key|auth|correlation|request-id/i.test(h)),
    ).toEqual([]);
    expect(seen[0]?.['user-agent']).toBe('isa-monitor/test');
  });

  it.each([
    [500, 'unexpected_status'],
    [302, 'unexpected_status'],
    [404, 'unexpected_status'],
  ] as const)('reports %i as %s', async (status, result) => {
    const { url } = await server(status);
    expect((await probeOnce(config(url), 'ua')).result).toBe(result);
  });

  it('reports a hang as timeout, at its elapsed time', async () => {
    const { url } = await server('hang');
    const outcome = await probeOnce(config(url, 200), 'ua');
    expect(outcome.result).toBe('timeout');
    expect(outcome.durationMs).toBeGreaterThanOrEqual(190);
  });

  it('reports a refused connection as network_error', async () => {
    const { url } = await server(200);
    await closeServers();
    expect((await probeOnce(config(url), 'ua')).result).toBe('network_error');
  });
});

describe('startControlProbe', () => {
  it('probes at once, and neither probes nor reports after stop', async () => {
    const { url, seen } = await server(200);
    const outcomes: ControlProbeOutcome[] = [];
    let notify: () => void = () => {};
    const probe = startControlProbe({
      config: { url, intervalMs: 1_000, timeoutMs: 500 },
      userAgent: 'ua',
      report: (o) => {
        outcomes.push(o);
        notify();
      },
    });
    await new Promise<void>((resolve) => (notify = () => outcomes.length >= 1 && resolve()));
    await probe.stop();
    expect(outcomes.map((o) => o.result)).toEqual(['ok']);
    expect(seen).toHaveLength(1);
  });
});
