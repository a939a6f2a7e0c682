import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../../kernel/check.js';
import {
  coverageCheck,
  matchedAreasViolation,
  type CoverageConfig,
  type CoverageFacts,
} from './index.js';
import type { Fault, SimEndpoint } from '../../simulator/index.js';
import { testEnvironment, testRuntime } from '../../../test/support/harness.js';
import { useTestSimulator } from '../../../test/support/simulator-hooks.js';
import { REQUEST_FAILURE_CASES } from '../../../test/support/request-failures.js';

const sim = useTestSimulator();

async function coverageWith(
  config: Partial<CoverageConfig> = {},
  fault?: Fault,
): Promise<CheckResult<CoverageFacts>> {
  if (fault) sim.simulator.faults.add({ endpoint: 'coverage' satisfies SimEndpoint, fault });
  const { runtime } = await testRuntime(
    testEnvironment(sim.url, { coverage: { enabled: true, requestTimeoutMs: 500, ...config } }),
  );
  try {
    return (await runtime.run(coverageCheck)) as CheckResult<CoverageFacts>;
  } finally {
    await runtime.close();
  }
}

describe('coverage check', () => {
  it('passes for the default geography and sees the API refuse a request without one', async () => {
    const start = sim.requests.length;
    const result = await coverageWith();
    expect(result).toMatchObject({ check: 'coverage', outcome: 'pass', reason: null });
    expect(result.facts).toMatchObject({
      result: 'ok',
      matchedAreasViolation: null,
      refusalStatus: 400,
    });
    expect(result.facts?.providers).toBeGreaterThan(0);
    expect(result.summary).toEqual({ providers: String(result.facts?.providers) });
    expect(sim.requests.slice(start).map((r) => r.path)).toEqual([
      '/coverage?states[]=CO',
      '/coverage',
    ]);
    expect(result.responses).toEqual([
      { operation: 'coverage', code: '200' },
      { operation: 'coverage_no_geography', code: '400' },
    ]);
    expect(result.contractChecks).toEqual([
      { check: 'response_schema', result: 'pass' },
      { check: 'matched_areas', result: 'pass' },
      { check: 'geography_required', result: 'pass' },
    ]);
    expect(result.steps.map((s) => s.name)).toEqual(['coverage', 'coverage_no_geography']);
    // The 400 is what the check asked for: not the step's error.
    expect(result.steps[1]).toMatchObject({ statusCode: 400, error: null });
  });

  it('repeats name[] for every value and combines parameters with AND', async () => {
    const start = sim.requests.length;
    const both = await coverageWith({ geography: { states: ['CO', 'NY'], counties: ['08031'] } });
    expect(sim.requests[start]?.path).toBe('/coverage?states[]=CO&states[]=NY&counties[]=08031');
    expect(both.outcome).toBe('pass');
    const states = await coverageWith({ geography: { states: ['CO', 'NY'] } });
    // OR within states, narrowed by the county (AND): fewer providers, never more.
    expect(both.facts?.providers).toBeGreaterThan(0);
    expect(both.facts?.providers).toBeLessThan(states.facts?.providers ?? 0);
  });

  it('fails below the configured least number of providers', async () => {
    const result = await coverageWith({
      geography: { blocks: ['080310011001000'] },
      minProviders: 50,
    });
    expect(result.reason).toBe('below_expectation');
    expect(result.facts?.providers).toBeGreaterThan(0);
    expect(result.facts?.providers).toBeLessThan(50);
  });

  it('fails an empty answer when providers are expected, and passes it when none are', async () => {
    const fault: Fault = { kind: 'coverage', change: 'empty' };
    const expected = await coverageWith({ minProviders: 1 }, fault);
    expect(expected.reason).toBe('below_expectation');
    expect(expected.facts?.providers).toBe(0);
    const unconfigured = await coverageWith({}, fault);
    expect(unconfigured.outcome).toBe('pass');
  });

  it('fails the matched_areas contract check on an area the query did not ask for', async () => {
    const result = await coverageWith({}, { kind: 'coverage', change: 'foreign_areas' });
    expect(result.reason).toBe('invalid_matched_areas');
    expect(result.facts?.matchedAreasViolation).toBe(
      'provider 1: a matched area the query did not ask for',
    );
    expect(result.contractChecks).toContainEqual({
      check: 'matched_areas',
      result: 'fail',
      detail: 'provider 1: a matched area the query did not ask for',
    });
  });

  it('fails the geography_required contract check when the API answers 200 without geography', async () => {
    const result = await coverageWith({}, { kind: 'coverage', change: 'geography_optional' });
    expect(result.reason).toBe('geography_not_required');
    expect(result.facts?.refusalStatus).toBe(200);
    expect(result.contractChecks).toContainEqual({
      check: 'geography_required',
      result: 'fail',
      detail: 'HTTP 200',
    });
  });

  it.each(REQUEST_FAILURE_CASES)('fails with %o as %s', async (fault, reason, code) => {
    const result = await coverageWith({}, fault as Fault);
    expect(result.outcome).toBe('fail');
    expect(result.reason).toBe(reason);
    expect(result.facts?.providers).toBeNull();
    expect(result.responses[0]).toEqual({ operation: 'coverage', code });
  });

  it('counts a 503 without geography as an error of the contract check, not a breach', async () => {
    // The simulator's faults cannot tell the two coverage requests apart: a server of its own
    // answers the geographic one validly and the other with 503.
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/coverage') {
        res.statusCode = 503;
        res.end(JSON.stringify({ message: 'down', request_status: 'error', request_id: 'r1' }));
        return;
      }
      res.end(JSON.stringify({ message: 'none', request_status: 'ok', data: [], meta: {} }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const { runtime } = await testRuntime(
      testEnvironment(`http://127.0.0.1:${port}`, { coverage: { enabled: true } }),
    );
    try {
      const result = (await runtime.run(coverageCheck)) as CheckResult<CoverageFacts>;
      expect(result.reason).toBe('server_error');
      expect(result.facts).toMatchObject({ providers: 0, refusalStatus: 503 });
      expect(result.contractChecks).toContainEqual({
        check: 'geography_required',
        result: 'error',
        detail: 'HTTP 503',
      });
    } finally {
      await runtime.close();
      server.close();
    }
  });
});

describe('matched_areas', () => {
  it.each([
    ['an area as sent', { states: ['CO'] }, [['co']], null],
    ['a GEOID inside a numeric value', { counties: ['08031'] }, [['080310011001000']], null],
    ['no areas', { states: ['CO'] }, [[]], 'provider 1: no matched_areas'],
    [
      'a foreign area',
      { states: ['CO'] },
      [['CO'], ['NY']],
      'provider 2: a matched area the query did not ask for',
    ],
    [
      'a provider matching only one of two parameters',
      { states: ['CO'], counties: ['08031'] },
      [['CO', '08031'], ['CO']],
      'provider 2: matches no value of counties[] (parameters combine with AND)',
    ],
  ] as const)('judges %s', (_name, geography, areas, expected) => {
    const providers = areas.map((matched) => ({ matched_areas: [...matched] }));
    expect(matchedAreasViolation(geography, providers)).toBe(expected);
  });
});
