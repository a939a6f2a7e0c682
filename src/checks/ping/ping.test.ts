import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../kernel/check.js';
import { pingCheck, type PingFacts } from './index.js';
import type { Fault } from '../../simulator/index.js';
import { testEnvironment, testRuntime } from '../../../test/support/harness.js';
import { useTestSimulator } from '../../../test/support/simulator-hooks.js';
import { REQUEST_FAILURE_CASES } from '../../../test/support/request-failures.js';

const sim = useTestSimulator();
beforeAll(async () => {
  // The simulator shares this process: warm both sides up so the first measured ping is not
  // dominated by JIT compilation.
  await pingWith();
});

async function pingWith(fault?: Fault, env = testEnvironment('')) {
  if (fault) sim.simulator.faults.add({ endpoint: 'ping', fault });
  const { runtime } = await testRuntime({ ...env, baseUrl: env.baseUrl || sim.url });
  try {
    return (await runtime.run(pingCheck)) as CheckResult<PingFacts>;
  } finally {
    await runtime.close();
  }
}

describe('ping check', () => {
  it('passes on a valid 200 and classifies fast answers as expected', async () => {
    // A loopback answer with no added latency, against an expected bound no busy machine reaches
    // (at 100 ms a loaded machine made it 'elevated'); the bounds themselves are proven below.
    const wide = { expectedMs: 5_000, warningMs: 10_000, criticalMs: 20_000 };
    const result = await pingWith(undefined, testEnvironment('', { thresholds: wide }));
    expect(result).toMatchObject({
      check: 'ping',
      environment: 'production',
      outcome: 'pass',
      reason: null,
      summary: { latency_class: 'expected' },
    });
    expect(result.facts).toMatchObject({ result: 'ok', up: true });
    expect(result.responses).toEqual([{ operation: 'ping', code: '200' }]);
    // The body's check is the ping's own result (invalid_body), not a contract check.
    expect(result.contractChecks).toEqual([]);
    expect(result.steps[0]).toMatchObject({
      name: 'ping',
      method: 'GET',
      path: '/ping',
      statusCode: 200,
    });
  });

  // The simulator holds each answer at least `ms`, so the lower bound of each class is exact;
  // the next bound up is far away, so a loaded machine cannot push the ping into the next class.
  it.each([
    [150, 'elevated', { expectedMs: 100, warningMs: 20_000, criticalMs: 30_000 }],
    [600, 'warning', { expectedMs: 100, warningMs: 500, criticalMs: 20_000 }],
    [1100, 'critical', { expectedMs: 100, warningMs: 500, criticalMs: 1_000 }],
  ] as const)('classifies %i ms of added latency as %s', async (ms, latencyClass, thresholds) => {
    const env = testEnvironment('', { thresholds: { ...thresholds } });
    const result = await pingWith({ kind: 'latency', ms }, env);
    expect(result.outcome).toBe('pass');
    expect(result.summary['latency_class']).toBe(latencyClass);
    expect(result.facts?.durationMs).toBeGreaterThanOrEqual(ms);
  });

  // A hang has its own test below, at a timeout short enough for a test.
  it.each(REQUEST_FAILURE_CASES.filter(([fault]) => fault.kind !== 'hang'))(
    'fails with %o as %s',
    async (fault, reason, code) => {
      const result = await pingWith(fault);
      expect(result.outcome).toBe('fail');
      expect(result.reason).toBe(reason);
      expect(result.facts?.result).toBe(reason);
      expect(result.facts?.up).toBe(false);
      expect(result.responses).toEqual([{ operation: 'ping', code }]);
    },
  );

  it('reports the API request_id of an error body in its step', async () => {
    const result = await pingWith({ kind: 'status', status: 500 });
    // The id the simulator gave this very request (its X-Request-Id and error body).
    const sent = sim.requests.findLast((r) => r.path === '/ping')?.requestId;
    expect(sent).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.steps[0]?.requestId).toBe(sent);
  });

  it('times out a hanging API at the configured timeout and counts it as critical latency', async () => {
    const result = await pingWith(
      { kind: 'hang' },
      testEnvironment('', { ping: { timeoutMs: 300 } }),
    );
    expect(result.reason).toBe('timeout');
    expect(result.summary['latency_class']).toBe('critical');
    expect(result.facts?.durationMs).toBeGreaterThanOrEqual(290);
    expect(result.facts?.durationMs).toBeLessThan(2_000);
  });

  it('fails with network_error when nothing listens', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const result = await pingWith(undefined, testEnvironment(`http://127.0.0.1:${port}`));
    expect(result.reason).toBe('network_error');
    expect(result.summary['latency_class']).toBeNull();
    expect(result.responses).toEqual([{ operation: 'ping', code: 'none' }]);
  });

  it('fails a 200 whose JSON body breaks the spec as invalid_body, naming the field in its step', async () => {
    // A loopback API whose ping answers JSON with a number where the spec has an ISO timestamp.
    const api = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'ok', timestamp: 42 }));
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = api.address() as { port: number };
      const result = await pingWith(undefined, testEnvironment(`http://127.0.0.1:${port}`));
      expect(result.reason).toBe('invalid_body');
      expect(result.facts?.up).toBe(false);
      expect(result.steps[0]).toMatchObject({ statusCode: 200 });
      expect(result.steps[0]?.error).toBe(
        'response body does not match the API schema at timestamp',
      );
      expect(result.contractChecks).toEqual([]);
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it('is unauthorized with a key the API does not know', async () => {
    const result = await pingWith(
      undefined,
      testEnvironment(sim.url, { apiKey: 'wrong-key-123456' }),
    );
    expect(result.reason).toBe('unauthorized');
  });
});
