import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceProvider } from './endpoint.js';
import type { CheckResult } from '../../kernel/check.js';
import { orderViolation, providersCheck, type ProvidersFacts } from './index.js';
import type { EnvironmentRuntime } from '../../environment.js';
import type { Fault } from '../../simulator/index.js';
import { testEnvironment, testRuntime } from '../../../test/support/harness.js';
import { useTestSimulator } from '../../../test/support/simulator-hooks.js';
import { REQUEST_FAILURE_CASES } from '../../../test/support/request-failures.js';

const sim = useTestSimulator();
let runtime: EnvironmentRuntime;
afterEach(async () => {
  await runtime?.close();
});

async function freshRuntime(): Promise<EnvironmentRuntime> {
  ({ runtime } = await testRuntime(
    testEnvironment(sim.url, { providers: { enabled: true, requestTimeoutMs: 500 } }),
  ));
  return runtime;
}

async function runWith(fault?: Fault, on = runtime): Promise<CheckResult<ProvidersFacts>> {
  if (fault) sim.simulator.faults.add({ endpoint: 'service_providers', count: 1, fault });
  return (await on.run(providersCheck)) as CheckResult<ProvidersFacts>;
}

describe('providers check', () => {
  it('passes on the simulator list, counting providers by type', async () => {
    await freshRuntime();
    const result = await runWith();
    expect(result).toMatchObject({ check: 'providers', outcome: 'pass', reason: null });
    expect(result.facts).toMatchObject({
      result: 'ok',
      counts: { fcc_provider: 7, supplemental_brand: 2 },
      changed: false,
      violation: null,
    });
    expect(result.summary).toEqual({ providers: '9' });
    expect(result.responses).toEqual([{ operation: 'service_providers', code: '200' }]);
    expect(result.contractChecks).toEqual([
      { check: 'response_schema', result: 'pass' },
      { check: 'provider_order', result: 'pass' },
    ]);
    expect(result.steps[0]).toMatchObject({
      name: 'service_providers',
      path: '/service_providers',
    });
  });

  it('counts a change of content once, against the previous valid list, across a failed run', async () => {
    await freshRuntime();
    const first = await runWith();
    expect(first.facts?.changed).toBe(false);
    const added = await runWith({ kind: 'provider_list', change: 'added' });
    expect(added.outcome).toBe('pass');
    expect(added.facts?.changed).toBe(true);
    expect(added.facts?.counts?.fcc_provider).toBe(8);
    // A failed run carries the hash over: the return to the old list is still a change.
    const failed = await runWith({ kind: 'status', status: 500 });
    expect(failed.facts).toMatchObject({ result: 'server_error', changed: false, counts: null });
    const back = await runWith();
    expect(back.facts?.changed).toBe(true);
    const same = await runWith();
    expect(same.facts?.changed).toBe(false);
  });

  it.each([
    ['misordered', 'record 3: total_residential_units above record 2'],
    ['brand_detached', 'supplemental brand not right after its parent'],
  ] as const)('fails the provider_order contract check on a %s list', async (change, detail) => {
    await freshRuntime();
    const result = await runWith({ kind: 'provider_list', change });
    expect(result.outcome).toBe('fail');
    expect(result.reason).toBe('order_violation');
    expect(result.facts?.violation).toContain(detail);
    expect(result.contractChecks).toContainEqual({
      check: 'provider_order',
      result: 'fail',
      detail: result.facts?.violation,
    });
  });

  it('fails an empty list and exports zero providers', async () => {
    await freshRuntime();
    const result = await runWith({ kind: 'provider_list', change: 'empty' });
    expect(result.reason).toBe('empty');
    expect(result.facts?.counts).toEqual({ fcc_provider: 0, supplemental_brand: 0 });
    expect(result.contractChecks).toEqual([{ check: 'response_schema', result: 'pass' }]);
  });

  it('passes a shrunken list (the alert rule judges the share) and counts the change', async () => {
    await freshRuntime();
    await runWith();
    const result = await runWith({ kind: 'provider_list', change: 'shrink' });
    expect(result.outcome).toBe('pass');
    expect(result.facts?.changed).toBe(true);
    expect(result.facts?.counts).toEqual({ fcc_provider: 4, supplemental_brand: 2 });
  });

  it.each(REQUEST_FAILURE_CASES)('fails with %o as %s', async (fault, reason, code) => {
    await freshRuntime();
    const result = await runWith(fault);
    expect(result.outcome).toBe('fail');
    expect(result.reason).toBe(reason);
    expect(result.facts?.counts).toBeNull();
    expect(result.responses).toEqual([{ operation: 'service_providers', code }]);
  });
});

describe('the ordering promise', () => {
  const p = (
    id: string,
    units: number,
    type: ServiceProvider['type'] = 'fcc_provider',
    fcc = `fcc-${id}`,
  ): ServiceProvider => ({ id, name: id, fcc_name: fcc, total_residential_units: units, type });

  it.each([
    ['an empty list', [], null],
    ['equal units', [p('a', 5), p('b', 5)], null],
    [
      'two brands after their parent',
      [
        p('a', 9, 'fcc_provider', 'A'),
        p('a1', 9, 'supplemental_brand', 'A'),
        p('a2', 9, 'supplemental_brand', 'A'),
        p('b', 3),
      ],
      null,
    ],
    ['rising units', [p('a', 5), p('b', 6)], 'record 2: total_residential_units above record 1'],
    [
      'a brand first',
      [p('a1', 9, 'supplemental_brand', 'A')],
      'record 1: supplemental brand before any parent provider',
    ],
    [
      'a brand after another parent',
      [
        p('a', 9, 'fcc_provider', 'A'),
        p('b', 9, 'fcc_provider', 'B'),
        p('a1', 9, 'supplemental_brand', 'A'),
      ],
      'record 3: supplemental brand not right after its parent (fcc_name differs)',
    ],
    [
      'a brand with other units',
      [p('a', 9, 'fcc_provider', 'A'), p('a1', 8, 'supplemental_brand', 'A')],
      "record 2: supplemental brand does not repeat its parent's units",
    ],
  ] as const)('judges %s', (_name, list, expected) => {
    expect(orderViolation(list as readonly ServiceProvider[])).toBe(expected);
  });
});
