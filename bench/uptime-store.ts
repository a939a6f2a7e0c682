/**
 * Size of the uptime record (`src/server/uptime-store.ts`) after 90 simulated days: two
 * environments, every check of the build at its default interval (a ping every 60 s, a lifecycle
 * every 5 min, ...), latencies spread over a realistic range, an outage every few days and a
 * rejected key now and then. Then the worst case: an API that flaps at every ping all quarter
 * (the incident list at its cap, every latency bucket used). Prints the file sizes.
 *
 *   npx tsx bench/uptime-store.ts
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CHECK_LIST } from '../src/checks/index.js';
import { sectionOf, validateConfigDocument } from '../src/config/index.js';
import type { AnyCheck, CheckResult } from '../src/kernel/check.js';
import { UptimeStore } from '../src/server/uptime-store.js';

const DAY_MS = 86_400_000;

export interface Simulation {
  environments: readonly string[];
  days: number;
  /** The simulated now: the end of the last day's runs. */
  now: number;
  /** `steady`: outages now and then; `flapping`: the availability check fails every other run. */
  mode?: 'steady' | 'flapping';
  checks?: readonly AnyCheck[];
}

/** Every enabled check's default interval, from the configuration's own defaults. */
export function defaultIntervals(checks: readonly AnyCheck[]): Array<[AnyCheck, number]> {
  const loaded = validateConfigDocument(
    {
      environments: [
        {
          name: 'x',
          base_url: 'https://isa.example',
          api_key_env: 'K',
          lifecycle: { addresses: [{ street1: '1 Main St', zip: '80202', expect: 'any' }] },
        },
      ],
    },
    { checks, env: { K: 'k' } },
  );
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  const env = loaded.config.environments[0];
  if (env === undefined) throw new Error('no environment');
  return checks
    .map((check): [AnyCheck, number, boolean] => {
      const section = sectionOf(env, check);
      return [check, section.intervalMs, section.enabled];
    })
    .filter(([, , enabled]) => enabled)
    .map(([check, interval]) => [check, interval]);
}

/** A deterministic pseudo-random sequence (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A scheduled run as the daemon receives it, with only what the record reads. */
export function scheduledRun(
  check: string,
  environment: string,
  t: number,
  durationMs: number,
  reason: string | null,
): CheckResult {
  return {
    check,
    environment,
    outcome: reason === null ? 'pass' : 'fail',
    reason,
    summary: {},
    startedAt: t,
    durationMs,
    steps: [],
    facts: null,
    responses: [],
    contractChecks: [],
  };
}

/**
 * Feeds `store` (opened on a clock that `setNow` moves) the scheduled runs of `days` days ending
 * at `now`, in time order across environments and checks.
 */
export function simulate(store: UptimeStore, setNow: (t: number) => void, sim: Simulation): void {
  const checks = defaultIntervals(sim.checks ?? CHECK_LIST);
  const rnd = random(42);
  const start = Math.floor(sim.now / DAY_MS) * DAY_MS - (sim.days - 1) * DAY_MS;
  const availability = (sim.checks ?? CHECK_LIST).find((c) => c.availability)?.name;
  // The schedule as a merge of every (environment, check) ticker.
  const tickers = sim.environments.flatMap((environment, e) =>
    checks.map(([check, interval]) => ({
      environment,
      check: check.name,
      interval,
      next: start + e * 7_000,
    })),
  );
  let outageUntil = new Map<string, number>();
  for (;;) {
    let ticker = tickers[0];
    for (const candidate of tickers) if (ticker && candidate.next < ticker.next) ticker = candidate;
    if (ticker === undefined || ticker.next > sim.now) break;
    const t = ticker.next;
    ticker.next += ticker.interval;
    setNow(t);
    const base = ticker.check === availability ? 45 : 350;
    // Log-normal-ish: most runs near the base, a tail up to ~20×.
    const durationMs =
      base * Math.exp(0.5 * (rnd() + rnd() + rnd() - 1.5) * 2) * (rnd() < 0.01 ? 8 : 1);
    let reason: string | null = null;
    if (ticker.check === availability) {
      if (sim.mode === 'flapping') {
        reason = Math.floor((t - start) / ticker.interval) % 2 === 0 ? 'server_error' : null;
      } else {
        const until = outageUntil.get(ticker.environment) ?? 0;
        if (t < until) reason = 'timeout';
        else if (rnd() < 1 / (3 * 1440)) {
          // An outage of 2 to 30 minutes about every 3 days.
          outageUntil = new Map(outageUntil).set(ticker.environment, t + (2 + rnd() * 28) * 60_000);
          reason = 'server_error';
        } else if (rnd() < 0.001) reason = 'unauthorized';
      }
    } else if (rnd() < 0.01) reason = 'timeout';
    store.record(scheduledRun(ticker.check, ticker.environment, t, durationMs, reason));
  }
  setNow(sim.now);
}

/** Simulates into a fresh record at `path` and returns its size in bytes once written. */
export async function simulatedSize(path: string, sim: Simulation): Promise<number> {
  let now = sim.now;
  const store = await UptimeStore.open({
    path,
    checks: sim.checks ?? CHECK_LIST,
    now: () => now,
    flushIntervalMs: 0,
  });
  simulate(store, (t) => (now = t), sim);
  await store.close();
  return (await stat(path)).size;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'isa-uptime-bench-'));
  try {
    const now = Date.parse('2026-11-27T12:00:00Z');
    const environments = ['production', 'sandbox'];
    for (const mode of ['steady', 'flapping'] as const) {
      const began = performance.now();
      const bytes = await simulatedSize(join(dir, `${mode}.uptime.json`), {
        environments,
        days: 90,
        now,
        mode,
      });
      console.log(
        `${mode}: 2 environments × 90 days, every check at its default interval: ` +
          `${bytes} bytes (${(bytes / 1024 / 1024).toFixed(3)} MiB), simulated in ` +
          `${Math.round(performance.now() - began)} ms`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
