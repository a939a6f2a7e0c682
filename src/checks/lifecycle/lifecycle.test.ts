import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { Agent } from 'undici';
import { EnvironmentRuntime } from '../../environment.js';
import { REFILL_HEADROOM } from '../../limits/request-budget.js';
import type { CheckResult } from '../../kernel/check.js';
import { lifecycleCheck, type AddressConfig, type LifecycleFacts } from './index.js';
import type { FaultRule } from '../../simulator/index.js';
import {
  startTestSimulator,
  testEnvironment,
  testRuntime,
  type EnvironmentOverrides,
  type TestSimulator,
} from '../../../test/support/harness.js';
import { useTestSimulator } from '../../../test/support/simulator-hooks.js';
import { CHECK_LIST } from '../index.js';
import { stringify } from 'yaml';
import { formatProblems, parseConfigText } from '../../config/index.js';
import { sectionOf } from '../../config/section.js';
import { fixtures } from './fixtures.js';

const sim = useTestSimulator({ qualifyDelayMs: 150 });
let zip = 10000;

/** A fresh ZIP per run, so the simulator's recent-lookup cache never answers for another test. */
function address(street1: string, expect: AddressConfig['expect'] = 'available'): AddressConfig {
  zip += 1;
  return { street1, zip: String(zip), expect };
}

/** testEnvironment's lifecycle poll interval. */
const POLL_MS = 50;

/**
 * A simulator whose clock moves one poll interval with every poll it receives, so each 150 ms
 * stage of a test address is seen by three polls however long a busy machine takes between them
 * (on the real clock, one stalled poll can skip a whole stage). Closed after the test.
 */
async function pollPacedSimulator(): Promise<TestSimulator> {
  let arrivals: Array<{ path: string }> = [];
  const polled = () => arrivals.filter((r) => r.path.endsWith('/internet')).length;
  const paced = await startTestSimulator({
    qualifyDelayMs: 150,
    now: () => Date.parse('2026-01-05T12:00:00Z') + polled() * POLL_MS,
  });
  arrivals = paced.requests;
  onTestFinished(() => paced.close());
  return paced;
}

async function runLifecycle(
  addr: AddressConfig,
  opts: {
    faults?: FaultRule[];
    lifecycle?: EnvironmentOverrides['lifecycle'];
    target?: TestSimulator;
  } = {},
) {
  const target = opts.target ?? sim;
  for (const rule of opts.faults ?? []) target.simulator.faults.add(rule);
  const env = testEnvironment(target.url, { lifecycle: { addresses: [addr], ...opts.lifecycle } });
  const harness = await testRuntime(env);
  try {
    const result = (await harness.runtime.run(lifecycleCheck)) as CheckResult<LifecycleFacts>;
    return { result, ...harness };
  } finally {
    await harness.runtime.close();
  }
}

const stepNames = (steps: Array<{ name: string }>) => [...new Set(steps.map((s) => s.name))];

describe('lifecycle check', () => {
  it('creates, polls while pending, reads, closes and sees 410 afterwards', async () => {
    const paced = await pollPacedSimulator();
    const { result, ledger } = await runLifecycle(address('2 Pending Ave'), { target: paced });
    expect(result).toMatchObject({
      outcome: 'pass',
      reason: null,
      summary: { qualify_status: 'available' },
    });
    // The trace's step names are the step labels of isa_lifecycle_step_duration_seconds.
    expect(stepNames(result.steps)).toEqual(['create', 'poll', 'get', 'close', 'verify_gone']);
    expect(result.facts?.pollStatuses[0]).toBe('pending');
    expect(result.facts?.pollStatuses.at(-1)).toBe('available');
    expect(result.facts?.qualifyDurationMs).toBeGreaterThanOrEqual(140);
    expect(result.facts?.serviceDataSet).toMatch(/^\d+$/);
    expect(Object.keys(result.facts?.stepDurationsMs ?? {}).sort()).toEqual(
      ['close', 'create', 'get', 'poll', 'verify_gone'].sort(),
    );
    expect(result.contractChecks).toContainEqual({ check: 'closed_session_gone', result: 'pass' });
    expect(result.contractChecks).toContainEqual({ check: 'session_token_header', result: 'pass' });
    expect(result.contractChecks.filter((c) => c.result !== 'pass')).toEqual([]);
    expect(ledger.list()).toEqual([]);
    expect(paced.simulator.state.openSessions()).toEqual([]);
  });

  it('keeps session tokens out of step paths', async () => {
    const { result } = await runLifecycle(address('2 Pending Ave'), {
      target: await pollPacedSimulator(),
    });
    const paths = result.steps.map((s) => s.path);
    expect(paths).toContain('/sessions/{token}/services/internet');
    expect(paths).toContain('/sessions/{token}');
  });

  it('does not poll when providers come back in the creation response', async () => {
    const { result } = await runLifecycle(address('1 Instant Way'));
    expect(result.outcome).toBe('pass');
    expect(stepNames(result.steps)).toEqual(['create', 'get', 'close', 'verify_gone']);
    expect(result.facts?.stepDurationsMs.poll).toBeUndefined();
  });

  it('keeps polling through retry_later and pending', async () => {
    const { result } = await runLifecycle(address('5 Retry Ln'), {
      target: await pollPacedSimulator(),
    });
    expect(result.outcome).toBe('pass');
    expect(result.facts?.pollStatuses).toEqual([
      'retry_later',
      'retry_later',
      'retry_later',
      'pending',
      'pending',
      'pending',
      'available',
    ]);
  });

  it('passes on no_service when no_service is expected, and flags it when it is not', async () => {
    const expected = await runLifecycle(address('3 No Service Rd', 'no_service'));
    expect(expected.result).toMatchObject({
      outcome: 'pass',
      summary: { qualify_status: 'no_service' },
    });
    const unexpected = await runLifecycle(address('3 No Service Rd', 'available'));
    expect(unexpected.result).toMatchObject({ outcome: 'fail', reason: 'unexpected_outcome' });
    expect(stepNames(unexpected.result.steps)).toContain('verify_gone');
  });

  it('reports qualify_failed and still closes the session', async () => {
    const { result, ledger } = await runLifecycle(address('4 Failed Blvd'));
    expect(result).toMatchObject({
      outcome: 'fail',
      reason: 'qualify_failed',
      summary: { qualify_status: 'failed' },
    });
    expect(ledger.list()).toEqual([]);
    expect(sim.simulator.state.openSessions()).toEqual([]);
  });

  it('gives up at poll_timeout with outcome timeout (unknown), never no_service', async () => {
    const { result, ledger } = await runLifecycle(address('6 Forever Pending Ct'), {
      lifecycle: { pollTimeoutMs: 500, pollIntervalMs: 50 },
    });
    expect(result).toMatchObject({
      outcome: 'fail',
      reason: 'qualify_timeout',
      summary: { qualify_status: 'timeout' },
    });
    expect(result.facts?.qualifyOutcome).toBe('timeout');
    // It waited out the poll timeout, less the one poll that would have ended past it, and polled
    // no more than the timeout holds: each poll follows a 50 ms wait, which load only lengthens.
    // A check that polled on past its timeout would poll until the run's deadline.
    expect(result.facts?.qualifyDurationMs).toBeGreaterThan(500 - 50);
    expect(result.facts?.pollStatuses.length).toBeLessThanOrEqual(500 / 50);
    expect(result.facts?.pollStatuses.every((s) => s === 'pending')).toBe(true);
    expect(ledger.list()).toEqual([]);
    expect(sim.simulator.state.openSessions()).toEqual([]);
  });

  it('reports address_validation_unavailable and honours its Retry-After', async () => {
    const { result, runtime } = await runLifecycle(address('7 Validation Down Dr'));
    expect(result).toMatchObject({ outcome: 'fail', reason: 'address_validation_unavailable' });
    expect(result.responses).toEqual([{ operation: 'create_session', code: '503' }]);
    expect(runtime.gate.remainingMs()).toBeGreaterThan(25_000);
  });

  // A 503 is judged by its step: on creation it is the spec's "address validation unavailable";
  // on a poll or read it is a server failure (`error`). Its Retry-After closes the gate either
  // way, and a run that cannot outlast the gate is `rate_limited` (docs/cli.md).
  it('ends as error on a 503 with Retry-After on a poll, and closes after the wait', async () => {
    const before = sim.requests.length;
    const { result, ledger } = await runLifecycle(address('2 Pending Ave'), {
      faults: [
        {
          endpoint: 'poll_services',
          fault: { kind: 'status', status: 503, retryAfterSeconds: 1 },
          count: 1,
        },
      ],
    });
    expect(result).toMatchObject({ outcome: 'fail', reason: 'error' });
    expect(result.responses).toContainEqual({ operation: 'poll_services', code: '503' });
    // The cleanup waited out the second the API asked for, then closed the session.
    const requests = sim.requests.slice(before);
    const refused = requests.findIndex((r) => r.path.endsWith('/services/internet'));
    const close = requests.find((r) => r.method === 'DELETE');
    expect(close!.at - requests[refused]!.at).toBeGreaterThanOrEqual(1_000);
    expect(ledger.list()).toEqual([]);
    expect(sim.simulator.state.openSessions()).toEqual([]);
  });

  it('ends as rate_limited when the Retry-After in force outlasts the run', async () => {
    const env = testEnvironment(sim.url, {
      lifecycle: { addresses: [address('2 Pending Ave')] },
    });
    const harness = await testRuntime(env);
    harness.runtime.gate.closeFor(60_000);
    const result = await harness.runtime.run(lifecycleCheck);
    await harness.runtime.close();
    expect(result).toMatchObject({ outcome: 'fail', reason: 'rate_limited' });
    expect(result.responses).toEqual([]);
  });

  it('ends as budget when the request budget cannot serve a step before the deadline', async () => {
    const env = testEnvironment(sim.url, {
      requestBudgetPerSecond: 0.1,
      lifecycle: { addresses: [address('2 Pending Ave')], timeoutMs: 3_000 },
    });
    const harness = await testRuntime(env);
    // The one token goes to a request of another check: the next is 10 s away.
    await harness.runtime.budget.acquire();
    const result = await harness.runtime.run(lifecycleCheck);
    await harness.runtime.close();
    expect(result).toMatchObject({ outcome: 'fail', reason: 'budget' });
    expect(result.responses).toEqual([]);
    expect(harness.ledger.list()).toEqual([]);
  });

  it('detects a closed session that does not answer 410', async () => {
    const { result, ledger } = await runLifecycle(address('2 Pending Ave'), {
      faults: [{ endpoint: 'get_session', fault: { kind: 'not_gone' } }],
    });
    expect(result).toMatchObject({ outcome: 'fail', reason: 'not_gone_after_close' });
    expect(result.contractChecks).toContainEqual({
      check: 'closed_session_gone',
      result: 'fail',
      detail: 'HTTP 200',
    });
    // The API confirmed the close, so nothing is left to close.
    expect(ledger.list()).toEqual([]);
  });

  it('keeps a session whose close failed in the ledger, and the reaper closes it later', async () => {
    const { result, ledger, runtime } = await runLifecycle(address('2 Pending Ave'), {
      faults: [{ endpoint: 'close_session', fault: { kind: 'close_fail', status: 500 } }],
    });
    expect(result).toMatchObject({ outcome: 'fail', reason: 'close_failed' });
    expect(ledger.count('production')).toBe(1);
    expect(sim.simulator.state.openSessions()).toHaveLength(1);

    sim.simulator.faults.clear();
    const reopened = await testRuntime(runtime.config, ledger.path);
    await reopened.runtime.reaper.sweep({ force: true });
    await reopened.runtime.close();
    expect(reopened.ledger.list()).toEqual([]);
    expect(sim.simulator.state.openSessions()).toEqual([]);
  });

  it('is unauthorized when the API rejects the key, creating nothing', async () => {
    const { result } = await runLifecycle(address('2 Pending Ave'), {
      faults: [{ endpoint: 'create_session', fault: { kind: 'status', status: 401 } }],
    });
    expect(result).toMatchObject({ outcome: 'fail', reason: 'unauthorized' });
    expect(sim.simulator.state.openSessions()).toEqual([]);
  });

  it('is rate_limited on 429 and sends nothing more until Retry-After has passed', async () => {
    const { result, runtime } = await runLifecycle(address('2 Pending Ave'), {
      faults: [
        {
          endpoint: 'poll_services',
          count: 1,
          fault: { kind: 'status', status: 429, retryAfterSeconds: 1 },
        },
      ],
    });
    expect(result).toMatchObject({ outcome: 'fail', reason: 'rate_limited' });
    const limitedAt = sim.requests.findLast((r) => r.path.endsWith('/services/internet'))?.at ?? 0;
    // The cleanup closed the session, but only after the Retry-After second.
    const closeAt = sim.requests.findLast((r) => r.method === 'DELETE')?.at ?? 0;
    expect(closeAt - limitedAt).toBeGreaterThanOrEqual(950);
    expect(sim.requests.filter((r) => r.at > limitedAt && r.at < limitedAt + 950)).toEqual([]);
    expect(runtime.gate.isOpen()).toBe(true);
    expect(sim.simulator.state.openSessions()).toEqual([]);
  });

  it('fails with create_failed on a malformed creation body and counts the schema violation', async () => {
    const { result } = await runLifecycle(address('2 Pending Ave'), {
      faults: [{ endpoint: 'create_session', fault: { kind: 'malformed' } }],
    });
    expect(result).toMatchObject({ outcome: 'fail', reason: 'create_failed' });
    expect(result.contractChecks).toContainEqual(
      expect.objectContaining({ check: 'response_schema', result: 'fail' }),
    );
    expect(result.contractChecks.filter((c) => c.result === 'pass')).toEqual([]);
  });

  it('closes the session even when a poll hangs past the run deadline', async () => {
    const { result, ledger } = await runLifecycle(address('2 Pending Ave'), {
      faults: [{ endpoint: 'poll_services', fault: { kind: 'hang' } }],
      lifecycle: { timeoutMs: 600 },
    });
    expect(result).toMatchObject({ outcome: 'fail', reason: 'error' });
    expect(ledger.list()).toEqual([]);
    expect(sim.simulator.state.openSessions()).toEqual([]);
  });

  it('never sends more than its request budget per second', async () => {
    sim.requests.length = 0;
    // Counted where requests leave the monitor (its dispatcher), not where they arrive: on a busy
    // machine one request can sit in the loopback or the simulator's queue for tens of ms while
    // the next, sent on time, catches up with it, and arrivals say nothing about the budget.
    const sent: number[] = [];
    const dispatcher = new Agent().compose((dispatch) => (options, handler) => {
      sent.push(performance.now());
      return dispatch(options, handler);
    });
    // A budget of 2/s against 1 ms polls: the budget, not the machine's speed, sets the pace,
    // even when a loaded machine takes a few hundred ms per request.
    const budget = 2;
    const env = testEnvironment(sim.url, {
      requestBudgetPerSecond: budget,
      lifecycle: {
        addresses: [address('6 Forever Pending Ct')],
        pollIntervalMs: 1,
        pollTimeoutMs: 1_500,
      },
    });
    const { ledger } = await testRuntime(env);
    const log = { debug() {}, info() {}, warn() {}, error() {} };
    const runtime = new EnvironmentRuntime(env, {
      checks: CHECK_LIST,
      ledger,
      userAgent: 'test',
      log,
      dispatcher,
    });
    const result = await runtime.run(lifecycleCheck);
    await runtime.close();
    await dispatcher.close();
    expect(result.reason).toBe('qualify_timeout');
    expect(sim.requests).toHaveLength(sent.length);
    // Refilled with 1% headroom (REFILL_HEADROOM), a bucket of one token lets at most
    // 1 + N × 1.01 × 1 s requests into any sliding second, and none closer than 1 / (1.01 N) s.
    const cap = Math.floor(1 + budget * (1 + REFILL_HEADROOM));
    for (const t of sent) {
      expect(sent.filter((u) => u >= t && u < t + 1000).length).toBeLessThanOrEqual(cap);
    }
    const minGapMs = 1000 / (budget * (1 + REFILL_HEADROOM));
    for (let i = 1; i < sent.length; i++) {
      expect(sent[i]! - sent[i - 1]!).toBeGreaterThanOrEqual(minGapMs - 10);
    }
    // Create, at least one poll past the first, then get, close and the 410 check.
    expect(sent.length).toBeGreaterThanOrEqual(6);
  });

  it('rotates through the configured addresses, one per run', async () => {
    const addresses = [address('1 Instant Way'), address('3 No Service Rd', 'no_service')];
    const env = testEnvironment(sim.url, { lifecycle: { addresses } });
    const { runtime } = await testRuntime(env);
    const first = await runtime.run(lifecycleCheck);
    const second = await runtime.run(lifecycleCheck);
    const third = await runtime.run(lifecycleCheck);
    await runtime.close();
    expect([
      first.summary['qualify_status'],
      second.summary['qualify_status'],
      third.summary['qualify_status'],
    ]).toEqual(['available', 'no_service', 'available']);
  });
});

describe('lifecycle check when the session ledger cannot be written', () => {
  it('creates no session it could not record, and fails the run', async () => {
    const env = testEnvironment(sim.url, { lifecycle: { addresses: [address('2 Pending Ave')] } });
    const dir = join(await mkdtemp(join(tmpdir(), 'isa-ledger-')), 'state');
    const { runtime, lines } = await testRuntime(env, join(dir, 'sessions.json'));
    // The state directory becomes a file: every write fails, even for root.
    await writeFile(dir, '');
    const before = sim.requests.length;
    const result = await runtime.run(lifecycleCheck);
    await runtime.close();
    expect(result).toMatchObject({ outcome: 'fail', reason: 'error' });
    expect(lines.some((l) => l.msg === 'lifecycle run aborted')).toBe(true);
    expect(sim.requests.slice(before).filter((r) => r.method === 'POST')).toEqual([]);
    expect(sim.simulator.state.openSessions()).toEqual([]);
  });
});

describe('lifecycle config', () => {
  const load = (lifecycle: Record<string, unknown>) => {
    const result = parseConfigText(
      stringify({
        // Budget enough for the configured section's poll every 100 ms.
        environments: [
          {
            name: 'production',
            base_url: 'https://a.invalid',
            request_budget_per_second: 20,
            lifecycle,
          },
        ],
      }),
      { checks: CHECK_LIST, env: { ISA_PRODUCTION_API_KEY: 'prod-key' } },
    );
    if (!result.ok) throw new Error(formatProblems(result.problems));
    const [environment] = result.config.environments;
    if (environment === undefined) throw new Error('no environment');
    return sectionOf(environment, lifecycleCheck);
  };

  it('accepts a disabled lifecycle without addresses', () => {
    expect(load({ enabled: false })).toMatchObject({ enabled: false, addresses: [] });
  });

  it('leaves absent optional address fields absent, so the address is a session request as it is', () => {
    const { addresses } = load(fixtures.config.configured.file);
    expect(Object.keys(addresses[1] ?? {})).toEqual(['street1', 'expect', 'city', 'state']);
  });
});
