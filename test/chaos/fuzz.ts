/**
 * The response fuzzer: seeded, generated mutations of the API's answers (create above all), run
 * through real lifecycle and ping checks against the real simulator behind the mutating proxy.
 * Used by `response-fuzz.test.ts` (a modest number of cases in CI) and by `bench/chaos.ts`
 * (thousands, by hand).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHECKS, CHECK_LIST } from '../../src/checks/index.js';
import { LIFECYCLE_RESULTS } from '../../src/checks/lifecycle/index.js';
import { PING_RESULTS } from '../../src/checks/ping/index.js';
import { EnvironmentRuntime } from '../../src/environment.js';
import { SessionLedger } from '../../src/sessions/ledger.js';
import { seededRandom } from '../../src/simulator/random.js';
import { startSimulator } from '../../src/simulator/index.js';
import { API_KEY, captureLogger, testEnvironment } from '../support/harness.js';
import { monitorSideRecorder } from './monitor-side.js';
import { startFuzzProxy, type Mutation, type ProxiedRequest } from './proxy.js';

/** Per-request deadline in the fuzz; late answers are held a little past it. */
const REQUEST_TIMEOUT_MS = 300;
const GRACE_MS = 400;

const RETRY_AFTER_SHAPES = [
  '0',
  '1',
  '0.25',
  '2',
  '-5',
  '-0.5',
  'soon',
  '',
  '60s',
  '99999999999',
  '9'.repeat(30),
  'IMF+1',
  'IMF-past',
] as const;

export interface FuzzCounts {
  cases: number;
  failures: number;
  /** Sessions open on the simulator at the end that a token was ever sent for. */
  sessionsLeftOpen: number;
  /** Sessions reported as unrecoverable (a create whose token never arrived). */
  unrecoverable: number;
  retryAfterViolations: number;
  requests: number;
  failureDetails: string[];
}

type Pick = <T>(items: readonly T[]) => T;

function retryAfterValue(pick: Pick): string {
  const shape = pick(RETRY_AFTER_SHAPES);
  if (shape === 'IMF+1') return new Date(Date.now() + 1_000).toUTCString();
  if (shape === 'IMF-past') return new Date(Date.now() - 60_000).toUTCString();
  return shape;
}

/** What one case does to the create answer. */
function createMutation(random: () => number, pick: Pick): Mutation | null {
  const roll = random();
  const stripMeta = (text: string): string => {
    try {
      const body = JSON.parse(text) as { meta?: Record<string, unknown> };
      if (body.meta) delete body.meta['session_token'];
      return JSON.stringify(body);
    } catch {
      return text;
    }
  };
  if (roll < 0.12) return null;
  if (roll < 0.27) return { status: pick([200, 202, 500, 502, 400, 409, 418]) };
  if (roll < 0.35) return { removeHeaders: ['session_token'] };
  if (roll < 0.42) return { body: stripMeta };
  if (roll < 0.5) return { foreignHeaderToken: true };
  if (roll < 0.56)
    return {
      status: pick([201, 200, 500]),
      setHeaders: { 'content-type': 'text/html' },
      body: '<html><body>Bad gateway</body></html>',
    };
  if (roll < 0.6) return { body: (t) => t.slice(0, Math.floor(t.length / 2)) };
  if (roll < 0.66)
    // Answered after the deadline, inside or beyond the grace period.
    return { delayMs: REQUEST_TIMEOUT_MS + pick([50, 150, 250, GRACE_MS + 200]) };
  if (roll < 0.7) return { drop: true };
  if (roll < 0.73) return { setHeaders: { session_token: 'bad\u0001token' } };
  if (roll < 0.78) {
    // No token anywhere: a 2xx or 500 may have created one (reported), a 4xx or 503 did not.
    const status = pick([201, 500, 422, 503]);
    return {
      status,
      forward: status === 201 || status === 500,
      removeHeaders: ['session_token'],
      body: (t) => stripMeta(t),
    };
  }
  if (roll < 0.9)
    return {
      forward: false,
      status: pick([429, 503]),
      setHeaders: { 'retry-after': retryAfterValue(pick) },
    };
  return {
    status: pick([201, 429]),
    setHeaders: { 'retry-after': retryAfterValue(pick) },
  };
}

/** Occasional trouble on every other request. */
function otherMutation(req: ProxiedRequest, random: () => number, pick: Pick): Mutation | null {
  if (random() > 0.25) return null;
  if (req.endpoint === 'close_session') {
    return pick<Mutation>([
      { forward: false, status: 400 },
      { forward: false, status: 404 },
      {
        forward: false,
        status: 410,
        setHeaders: { 'content-type': 'text/html' },
        body: '<h1>Gone</h1>',
      },
      { forward: false, status: 429, setHeaders: { 'retry-after': retryAfterValue(pick) } },
      { status: 500 },
      { delayMs: REQUEST_TIMEOUT_MS + 100 },
    ]);
  }
  return pick<Mutation>([
    { status: 500 },
    { forward: false, status: 429, setHeaders: { 'retry-after': retryAfterValue(pick) } },
    { forward: false, status: 503, setHeaders: { 'retry-after': retryAfterValue(pick) } },
    { setHeaders: { 'content-type': 'text/html' }, body: '<html></html>' },
    { body: '{"truncated":' },
    { delayMs: REQUEST_TIMEOUT_MS + 100 },
  ]);
}

const BOUNDED_REASONS = new Set<string>([...LIFECYCLE_RESULTS, ...PING_RESULTS, 'timeout']);

/** Runs `cases` fuzzed cases from `seed`, `concurrency` at a time; never throws for a finding. */
export async function runResponseFuzz(opts: {
  cases: number;
  seed: number;
  concurrency?: number;
}): Promise<FuzzCounts> {
  const sim = await startSimulator({ apiKeys: [API_KEY], qualifyDelayMs: 30 });
  const proxy = await startFuzzProxy(sim.url);
  // Retry-After is judged where the monitor sends and reads, not at the proxy (monitor-side.ts).
  const monitor = monitorSideRecorder();
  const ledger = await SessionLedger.open(
    join(await mkdtemp(join(tmpdir(), 'isa-fuzz-')), 'sessions.json'),
  );
  const random = seededRandom(opts.seed);
  const pick: Pick = (items) => items[Math.floor(random() * items.length)] as never;
  const counts: FuzzCounts = {
    cases: 0,
    failures: 0,
    sessionsLeftOpen: 0,
    unrecoverable: 0,
    retryAfterViolations: 0,
    requests: 0,
    failureDetails: [],
  };
  const unrecoverableByEnv = new Map<string, number>();
  const createPlans = new Map<string, Mutation | null>();
  /**
   * Sessions one create of the environment can open on the simulator: two when the proxy adds a
   * foreign header token (it creates a second session itself). When such an answer is lost (no
   * answer within the grace, which a loaded machine makes likely), the monitor reports its one
   * intent, and that report stands for both sessions: nothing else can know of the second.
   */
  const sessionsPerCreate = new Map<string, number>();
  proxy.plan = (req) => {
    if (req.endpoint === 'create_session') {
      // One create per case environment is fuzzed; the plan was drawn when the case started.
      const plan = createPlans.get(req.environment) ?? null;
      createPlans.delete(req.environment);
      return plan;
    }
    return otherMutation(req, random, pick);
  };
  const fail = (detail: string): void => {
    counts.failures += 1;
    if (counts.failureDetails.length < 20) counts.failureDetails.push(detail);
  };

  const { log, lines } = captureLogger();
  const envConfig = (name: string) =>
    testEnvironment(`${proxy.url}/env/${name}`, {
      name,
      requestBudgetPerSecond: 50,
      ping: { timeoutMs: REQUEST_TIMEOUT_MS },
      lifecycle: {
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
        timeoutMs: 2_000,
        pollIntervalMs: 20,
        pollTimeoutMs: 600,
        addresses: [{ street1: '2 Pending Ave', zip: '80202', expect: 'available' }],
      },
    });
  const runtimeFor = (name: string) =>
    new EnvironmentRuntime(envConfig(name), {
      checks: CHECK_LIST,
      ledger,
      userAgent: 'isa-monitor/fuzz',
      log,
      dispatcher: monitor.dispatcher,
      lateAnswerGraceMs: GRACE_MS,
      onUnrecoverable: (intent) =>
        unrecoverableByEnv.set(
          intent.environment,
          (unrecoverableByEnv.get(intent.environment) ?? 0) + 1,
        ),
    });

  const names: string[] = [];
  const runCase = async (index: number): Promise<void> => {
    const name = `fz${index}`;
    names.push(name);
    const plan = createMutation(random, pick);
    createPlans.set(name, plan);
    sessionsPerCreate.set(name, plan?.foreignHeaderToken ? 2 : 1);
    const runtime = runtimeFor(name);
    try {
      for (const check of [CHECKS.lifecycle, CHECKS.ping]) {
        const result = await runtime.run(check);
        const json = JSON.stringify(result);
        if (json.includes(API_KEY)) fail(`${name}: the API key appeared in a result`);
        if (result.reason !== null && !BOUNDED_REASONS.has(result.reason)) {
          fail(`${name}: unbounded reason ${result.reason}`);
        }
      }
      await runtime.tracking.settled();
      await runtime.reaper.sweep({ force: true });
    } catch (err) {
      fail(`${name}: ${String(err)}`);
    } finally {
      await runtime.close();
      counts.cases += 1;
    }
  };

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < opts.cases) await runCase(next++);
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker));

  const violations = monitor.violations();
  counts.retryAfterViolations = violations.length;
  counts.requests = proxy.arrivals.length;
  for (const v of violations.slice(0, 5)) {
    fail(`request inside Retry-After: ${v.method} ${v.path} ${v.msInsideWindow.toFixed(0)} ms in`);
  }

  // The next process, after every Retry-After has passed: a fresh gate per environment.
  proxy.recording = false;
  monitor.recording = false;
  proxy.plan = () => null;
  for (const name of names) {
    const runtime = runtimeFor(name);
    await runtime.reaper.sweep({ force: true });
    await runtime.close();
  }
  for (const name of names) {
    const open = sim.state.openSessions(name).length;
    const reported = unrecoverableByEnv.get(name) ?? 0;
    const covered = reported * (sessionsPerCreate.get(name) ?? 1);
    counts.unrecoverable += Math.min(open, covered);
    if (open > covered) {
      counts.sessionsLeftOpen += open - covered;
      fail(`${name}: ${open} session(s) open, ${reported} create(s) reported unrecoverable`);
    }
  }
  if (lines.some((l) => JSON.stringify(l).includes(API_KEY))) fail('the API key appeared in a log');
  ledger.close();
  await monitor.close();
  await proxy.close();
  await sim.close();
  return counts;
}

/** The counts line the suite prints. */
export function formatCounts(label: string, counts: object): string {
  const fields = Object.entries(counts)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => `${k}=${String(v)}`);
  return `[chaos] ${label}: ${fields.join(' ')}`;
}
