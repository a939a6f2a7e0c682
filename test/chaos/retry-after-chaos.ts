/**
 * Retry-After chaos: several environments on the real scheduler, runtimes, ledger and simulator
 * (over loopback), each answered at random, seeded moments with a 429 or a 503 carrying
 * `Retry-After`, on every operation the checks make. What it judges is the promise of
 * docs/architecture.md ("No environment goes silent"): once a gate has expired, every
 * environment's scheduled pings resume within one interval. It measures, per environment, the
 * longest silence between ping attempts that no Retry-After accounts for.
 *
 * The gates are taken from each environment's own Retry-After gate (every `closeFor`), so the
 * judgement is the monitor's view of when it was allowed to send, not the simulator's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckResult } from '../../src/kernel/check.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { EnvironmentRuntime } from '../../src/environment.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { SessionLedger } from '../../src/sessions/ledger.js';
import { startSimulator, type SimEndpoint } from '../../src/simulator/index.js';
import { randomInt, seededRandom } from '../../src/simulator/random.js';
import type { SkipReason } from '../../src/kernel/vocabulary.js';
import { API_KEY, captureLogger, testEnvironment } from '../support/harness.js';

export interface RetryAfterChaosOptions {
  environments: number;
  /** How long the faults are injected, ms; the run then watches one more `settleMs`. */
  durationMs: number;
  seed: number;
  /** Ping interval, ms (the setup: 1 s). */
  pingIntervalMs?: number;
  /** Mean gap between two gates of one environment, ms. */
  meanGapMs?: number;
  /** The longest Retry-After a gate asks for, s. */
  maxRetryAfterSeconds?: number;
  settleMs?: number;
  /** A ping may come this much later than its slot after a gate without counting as silent. */
  toleranceMs?: number;
}

export interface EnvironmentSilence {
  environment: string;
  pings: number;
  gates: number;
  /** The longest time from a ping attempt or a gate's end to the next ping attempt, ms. */
  longestSilenceMs: number;
}

export interface RetryAfterChaosCounts {
  environments: number;
  gatesInjected: number;
  gatesLived: number;
  pings: number;
  lifecycleRuns: number;
  skips: Partial<Record<SkipReason, number>>;
  abandoned: number;
  /** Environments whose longest silence exceeded one interval plus the tolerance. */
  silentEnvironments: number;
  longestSilenceMs: number;
  sessionsLeftOpen: number;
  perEnvironment: EnvironmentSilence[];
  /** Lines from stderr of this process that name MaxListenersExceededWarning. */
  listenerWarnings: number;
}

/** The operations the checks of this run make, and so where a gate may be answered. */
const ENDPOINTS: SimEndpoint[] = [
  'ping',
  'create_session',
  'poll_services',
  'get_session',
  'close_session',
];

interface Window {
  from: number;
  until: number;
}

/** Runs the chaos; resolves with its counts once every environment has been judged. */
export async function runRetryAfterChaos(
  opts: RetryAfterChaosOptions,
): Promise<RetryAfterChaosCounts> {
  const interval = opts.pingIntervalMs ?? 1_000;
  const meanGapMs = opts.meanGapMs ?? 6_000;
  const maxRetryAfter = opts.maxRetryAfterSeconds ?? 10;
  const settleMs = opts.settleMs ?? maxRetryAfter * 1_000 + 3 * interval;
  const tolerance = opts.toleranceMs ?? 500;
  const random = seededRandom(opts.seed);

  let listenerWarnings = 0;
  const onWarning = (warning: Error): void => {
    if (warning.name === 'MaxListenersExceededWarning') listenerWarnings += 1;
  };
  process.on('warning', onWarning);

  const sim = await startSimulator({ apiKeys: [API_KEY], qualifyDelayMs: 1_000 });
  const dir = await mkdtemp(join(tmpdir(), 'isa-retry-after-chaos-'));
  const ledger = await SessionLedger.open(join(dir, 'sessions.json'));
  const names = Array.from({ length: opts.environments }, (_, i) => `chaos-${i}`);
  const windows = new Map<string, Window[]>(names.map((n) => [n, []]));
  const pings = new Map<string, number[]>(names.map((n) => [n, []]));
  const skips: Partial<Record<SkipReason, number>> = {};
  let lifecycleRuns = 0;
  let abandoned = 0;

  const runtimes = names.map((name) => {
    const config = testEnvironment(`${sim.url}/env/${name}`, {
      name,
      // The setup the defect was seen in: 1 s pings, a lifecycle every 5 s polling every 500 ms.
      requestBudgetPerSecond: 3,
      ping: { intervalMs: interval, timeoutMs: 800, requestTimeoutMs: 800 },
      lifecycle: {
        intervalMs: 5 * interval,
        timeoutMs: 4_500,
        requestTimeoutMs: 1_000,
        pollIntervalMs: 500,
        pollTimeoutMs: 3_500,
      },
    });
    const runtime = new EnvironmentRuntime(config, {
      checks: CHECK_LIST,
      ledger,
      userAgent: 'isa-monitor/chaos',
      log: captureLogger().log,
    });
    // The monitor's own view of every Retry-After: the gate's closure after each `closeFor`.
    const closeFor = runtime.gate.closeFor.bind(runtime.gate);
    runtime.gate.closeFor = (ms: number) => {
      closeFor(ms);
      const now = Date.now();
      windows.get(name)!.push({ from: now, until: now + runtime.gate.remainingMs() });
    };
    return runtime;
  });

  const scheduler = new Scheduler({
    environments: runtimes,
    checks: CHECK_LIST,
    log: captureLogger().log,
    random,
    onResult: (result: CheckResult) => {
      if (result.check === 'ping' && result.followUp !== true) {
        pings.get(result.environment)?.push(result.startedAt);
      }
      if (result.check === 'lifecycle') lifecycleRuns += 1;
    },
    onSkip: (_environment, _check, reason) => {
      skips[reason] = (skips[reason] ?? 0) + 1;
    },
    onAbandon: () => {
      abandoned += 1;
    },
  });

  const started = Date.now();
  scheduler.start();
  // Gates at random moments, on every operation in turn (a random one first), per environment.
  let gatesInjected = 0;
  const handles: NodeJS.Timeout[] = names.map((name, index) => {
    let next = randomInt(random, 0, ENDPOINTS.length - 1);
    const plan = (): NodeJS.Timeout =>
      setTimeout(
        () => {
          if (Date.now() - started >= opts.durationMs) return;
          const endpoint = ENDPOINTS[next++ % ENDPOINTS.length]!;
          const status = random() < 0.7 ? 429 : 503;
          const retryAfterSeconds = randomInt(random, 1, maxRetryAfter);
          sim.faults.add({
            environment: name,
            endpoint,
            fault: { kind: 'status', status, retryAfterSeconds },
            count: 1,
          });
          gatesInjected += 1;
          handles[index] = plan();
        },
        randomInt(random, meanGapMs / 2, (meanGapMs * 3) / 2),
      );
    return plan();
  });

  await new Promise((resolve) => setTimeout(resolve, opts.durationMs));
  for (const handle of handles) clearTimeout(handle);
  sim.faults.clear();
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const ended = Date.now();
  await scheduler.stop(5_000);
  // Whatever a gate kept open is closed by the next process's sweep: stand for it once every
  // gate has passed, so what is still open after that is a leak.
  const lastGate = Math.max(0, ...[...windows.values()].flat().map((w) => w.until));
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, lastGate - Date.now())));
  await Promise.all(runtimes.map((r) => r.reaper.sweep({ force: true })));
  await Promise.all(runtimes.map((r) => r.close()));
  const sessionsLeftOpen = names.reduce((n, name) => n + sim.state.openSessions(name).length, 0);
  ledger.close();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
  process.off('warning', onWarning);

  const perEnvironment = names.map((name) => ({
    environment: name,
    pings: pings.get(name)!.length,
    gates: windows.get(name)!.length,
    longestSilenceMs: longestSilence(pings.get(name)!, windows.get(name)!, started, ended),
  }));
  return {
    environments: names.length,
    gatesInjected,
    gatesLived: perEnvironment.reduce((n, e) => n + e.gates, 0),
    pings: perEnvironment.reduce((n, e) => n + e.pings, 0),
    lifecycleRuns,
    skips,
    abandoned,
    silentEnvironments: perEnvironment.filter((e) => e.longestSilenceMs > interval + tolerance)
      .length,
    longestSilenceMs: Math.max(0, ...perEnvironment.map((e) => e.longestSilenceMs)),
    sessionsLeftOpen,
    perEnvironment,
    listenerWarnings,
  };
}

/**
 * The longest wait for a ping attempt that no Retry-After explains: from each attempt (or the
 * start), or from the end of a gate that ended before the next attempt, to that next attempt (or
 * the end of the watch).
 */
export function longestSilence(
  starts: number[],
  gates: Window[],
  from: number,
  to: number,
): number {
  const attempts = [...starts].sort((a, b) => a - b);
  let longest = 0;
  let previous = from;
  for (const at of [...attempts, to]) {
    // Nothing may go out while a gate is closed: the silence counts from the last gate's end.
    const gateEnd = Math.max(
      previous,
      ...gates.filter((g) => g.until <= at && g.until > previous).map((g) => g.until),
    );
    const closedAtEnd = gates.some((g) => g.from <= at && g.until > at);
    if (!closedAtEnd) longest = Math.max(longest, at - gateEnd);
    previous = at;
  }
  return Math.round(longest);
}

/** One line of the counts, as `bench/chaos.ts` and the test print them. */
export function formatRetryAfterCounts(label: string, c: RetryAfterChaosCounts): string {
  const skips = Object.entries(c.skips)
    .map(([reason, n]) => `${reason}:${n}`)
    .join(',');
  return (
    `[chaos] ${label}: environments=${c.environments} gatesInjected=${c.gatesInjected} ` +
    `gatesLived=${c.gatesLived} pings=${c.pings} lifecycleRuns=${c.lifecycleRuns} ` +
    `skips=${skips || 'none'} abandoned=${c.abandoned} silentEnvironments=${c.silentEnvironments} ` +
    `longestSilenceMs=${c.longestSilenceMs} sessionsLeftOpen=${c.sessionsLeftOpen} ` +
    `listenerWarnings=${c.listenerWarnings}`
  );
}
