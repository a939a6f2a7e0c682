/**
 * The certificate check as the scheduler runs it: through the runner, against the simulator
 * serving HTTPS with a certificate it made, its facts recorded by the real recorder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_LIST, SUMMARY_KEYS } from '../index.js';
import { createMetrics } from '../../metrics/registry.js';
import { Recorder } from '../../metrics/recorder.js';
import { toCheckJson } from '../../server/status.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { testEnvironment } from '../../../test/support/harness.js';
import { startRun } from '../../../test/support/run-check.js';
import { tlsCheck } from './index.js';

const simulators: RunningSimulator[] = [];

async function https(validDays: number, hosts?: string[]): Promise<RunningSimulator> {
  const sim = await startSimulator({
    apiKeys: ['tls-check-key-0123456789'],
    tls: { validDays, ...(hosts ? { hosts } : {}) },
  });
  simulators.push(sim);
  return sim;
}

let healthy: RunningSimulator;
let expiring: RunningSimulator;

beforeAll(async () => {
  healthy = await https(90);
  expiring = await https(5);
});

afterAll(async () => {
  await Promise.all(simulators.map((sim) => sim.close()));
});

/** One run of the check against `sim`, trusting its CA unless `trust` is false. */
async function runAgainst(sim: RunningSimulator, opts: { trust?: boolean; minDays?: number } = {}) {
  const environment = {
    ...testEnvironment(sim.url, {
      tls: { enabled: true, minDays: opts.minDays ?? 14, requestTimeoutMs: 5_000 },
    }),
    ...(opts.trust === false
      ? {}
      : { extraTrust: { caFile: '/ca.pem', certificates: [sim.caPem ?? ''] } }),
  };
  const { result } = startRun(sim.url, tlsCheck, { environment });
  return { result: await result, environment };
}

describe('the tls check', () => {
  it('passes on a trusted certificate far from its end, and reports when it ends', async () => {
    const { result } = await runAgainst(healthy);
    expect(result.outcome).toBe('pass');
    const notAfter = healthy.certificates?.notAfter.getTime() ?? 0;
    const json = toCheckJson(result, SUMMARY_KEYS);
    expect(json).toMatchObject({
      check: 'tls',
      outcome: 'pass',
      result: 'ok',
      expires_at: new Date(notAfter).toISOString(),
      verified: true,
    });
    expect(json['days_left']).toBeGreaterThanOrEqual(89);
    expect(json['days_left']).toBeLessThanOrEqual(90);
  });

  it('fails as expiring under min_days, with the expiry still read', async () => {
    const { result } = await runAgainst(expiring, { minDays: 14 });
    expect(result.outcome).toBe('fail');
    expect(result.reason).toBe('expiring');
    expect(result.summary).toMatchObject({ result: 'expiring', verified: true });
    const passes = await runAgainst(expiring, { minDays: 3 });
    expect(passes.result.outcome).toBe('pass');
  });

  it('reads the expiry of a chain it does not trust, and says it is untrusted', async () => {
    const { result } = await runAgainst(healthy, { trust: false });
    expect(result.outcome).toBe('fail');
    expect(result.summary).toMatchObject({ result: 'untrusted', verified: false });
    expect(result.summary['expires_at']).toBe(healthy.certificates?.notAfter.toISOString());
  });

  it('records the expiry, verification and result as isa_tls_* series', async () => {
    const { result, environment } = await runAgainst(healthy, { trust: false });
    const metrics = createMetrics({
      checks: CHECK_LIST,
      environments: [{ name: environment.name, checks: ['tls'] }],
      build: { version: 't', revision: 't', nodejs: 't' },
      collectDefaultMetrics: false,
    });
    new Recorder(metrics).recordResult(result);
    const text = await metrics.registry.metrics();
    const notAfter = (healthy.certificates?.notAfter.getTime() ?? 0) / 1000;
    expect(text).toContain(
      `isa_tls_expiry_timestamp_seconds{environment="production"} ${notAfter}`,
    );
    expect(text).toContain('isa_tls_verified{environment="production"} 0');
    expect(text).toContain('isa_tls_runs_total{environment="production",result="untrusted"} 1');
    expect(text).toContain('isa_tls_runs_total{environment="production",result="ok"} 0');
    // The check makes no API request: nothing is counted as one.
    expect(result.responses).toEqual([]);
  });

  it('is on by default for an https base URL and off for http', () => {
    const section = tlsCheck.config;
    const parsed = section.schema.parse({});
    expect(section.toConfig(parsed, { baseUrl: 'https://api.example' }).enabled).toBe(true);
    expect(section.toConfig(parsed, { baseUrl: 'http://127.0.0.1:8080' }).enabled).toBe(false);
    const forced = section.schema.parse({ enabled: false });
    expect(section.toConfig(forced, { baseUrl: 'https://api.example' }).enabled).toBe(false);
    expect(section.toConfig(parsed, { baseUrl: 'https://api.example' })).toMatchObject({
      intervalMs: 3_600_000,
      minDays: 14,
    });
  });

  it('fails without a handshake where the base URL is plain HTTP', async () => {
    const sim = await startSimulator({ apiKeys: ['tls-check-key-0123456789'] });
    simulators.push(sim);
    const environment = testEnvironment(sim.url, { tls: { enabled: true } });
    const result = await startRun(sim.url, tlsCheck, { environment }).result;
    expect(result).toMatchObject({ outcome: 'fail', reason: 'handshake_failed: NOT_HTTPS' });
  });
});
