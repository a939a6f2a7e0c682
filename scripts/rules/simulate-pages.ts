/**
 * Simulations of one monitor's pings against an API whose behaviour is a function of time, with
 * the confirmation pings the daemon's policy adds (`confirm-sequence.ts`), judged by the paging
 * rules' own conditions (`page-evaluator.ts`): the 30-day noise simulation and the time to page
 * over onset phases. The promtool scenarios (src/checks/ping/scenarios/confirm.yaml) check the same
 * cases against real Prometheus evaluation; this covers what is too long or too many for promtool.
 *
 * Usage: `npx tsx scripts/rules/simulate-pages.ts` prints the noise result and the phase table.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { seededRandom } from '../../src/simulator/random.js';
import { confirmEvents, type PingOutcome, type ScheduledPing } from './confirm-sequence.js';
import { REPO_ROOT, RULES_PATH } from './gen-rule-tests.js';
import { evaluatePages, loadCondition, type CountedPing, type Page } from './page-evaluator.js';

export const SCRAPE_S = 15;
export const PING_INTERVAL_S = 60;
/** A scheduled ping of minute m starts at m·60 + 1 s, as in the rule-test scenarios. */
export const PING_OFFSET_S = 1;

export const GOOD: PingOutcome = { slow: false, failed: false, seconds: 0.05 };
export const SLOW: PingOutcome = { slow: true, failed: false, seconds: 2 };
export const FAILED: PingOutcome = { slow: false, failed: true, seconds: 0.05 };

/** What the API answers a ping started at second t. */
export type Api = (t: number, confirm: boolean) => PingOutcome;

const seenAt = (finish: number) => Math.ceil(finish / SCRAPE_S) * SCRAPE_S;

/** Every ping of `seconds` of monitoring, scheduled and (if `confirm`) confirmation pings. */
export function simulatePings(api: Api, seconds: number, confirm: boolean): CountedPing[] {
  const scheduled: ScheduledPing[] = [];
  for (let start = PING_OFFSET_S; start < seconds; start += PING_INTERVAL_S) {
    scheduled.push({ start, ...api(start, false) });
  }
  const pings: CountedPing[] = scheduled.map((p) => ({
    seen: seenAt(p.start + p.seconds),
    confirm: false,
    slow: p.slow,
    failed: p.failed,
  }));
  if (confirm) {
    for (const e of confirmEvents(scheduled, (t) => api(t, true))) {
      if (e.kind !== 'run' || e.start >= seconds) continue;
      const o = e.outcome;
      pings.push({
        seen: seenAt(e.start + o.seconds),
        confirm: true,
        slow: o.slow,
        failed: o.failed,
      });
    }
  }
  return pings.sort((a, b) => a.seen - b.seen);
}

export type Kind = 'latency' | 'down';

/**
 * The paging rule of `kind` from the rules file, ready to evaluate: the one for monitors with
 * confirmation pings, or (`confirm` false) the one for monitors without.
 */
export function pagingRule(
  kind: Kind,
  confirm: boolean,
  rulesText = readFileSync(join(REPO_ROOT, RULES_PATH), 'utf8'),
) {
  const name = kind === 'latency' ? 'latency_critical' : 'down';
  const alert = kind === 'latency' ? 'IsaApiLatencyHigh' : 'IsaApiDown';
  return confirm
    ? loadCondition(rulesText, `environment:isa_ping_${name}:confirmed`, alert, 'confirmed')
    : loadCondition(rulesText, `environment:isa_ping_${name}:condition`, alert, 'scheduled');
}

/** A seeded generator of numbers in [0, 1): the same seed, the same 30 days. */
export const random = seededRandom;

/**
 * Noise: every scheduled ping, and every confirmation ping on its own draw, is bad with
 * probability `rate` (slow for `latency`, a server error for `down`), else good.
 */
export function noisyApi(kind: Kind, rate: number, seed: number): Api {
  const draw = random(seed);
  const bad = kind === 'latency' ? SLOW : FAILED;
  return () => (draw() < rate ? bad : GOOD);
}

/** The pages of `days` of noise. */
export function noisePages(
  kind: Kind,
  options: { days: number; rate: number; seed: number; confirm?: boolean },
): Page[] {
  const seconds = options.days * 86_400;
  const confirm = options.confirm ?? true;
  const pings = simulatePings(noisyApi(kind, options.rate, options.seed), seconds, confirm);
  return evaluatePages(pagingRule(kind, confirm), pings, { confirm, end: seconds });
}

/**
 * Seconds from onset to the page for a fault that starts at `onset` (after 30 minutes of good
 * pings) and lasts `length` seconds (Infinity: until the end); `bad(t)` says which pings during
 * the fault are bad (default: all). Null: no page within `horizon` seconds of the onset.
 */
export function timeToPage(
  kind: Kind,
  options: {
    onset: number;
    length?: number;
    confirm?: boolean;
    bad?: (t: number, confirm: boolean) => boolean;
    horizon?: number;
  },
): number | null {
  const { onset } = options;
  const length = options.length ?? Infinity;
  const confirm = options.confirm ?? true;
  const badOutcome = kind === 'latency' ? SLOW : FAILED;
  const api: Api = (t, c) =>
    t >= onset && t < onset + length && (options.bad?.(t, c) ?? true) ? badOutcome : GOOD;
  const end = onset + (options.horizon ?? 1800);
  const pings = simulatePings(api, end, confirm);
  const pages = evaluatePages(pagingRule(kind, confirm), pings, { confirm, end });
  const first = pages[0];
  return first === undefined ? null : first.at - onset;
}

/** 50 % intermittent faults: which pings are bad, by seconds since the onset. */
export const INTERMITTENT: ReadonlyArray<
  [string, (seed: number) => (sinceOnset: number) => boolean]
> = [
  [
    'each ping bad at random (p = 0.5)',
    (seed) => {
      const draw = random(seed);
      return () => draw() < 0.5;
    },
  ],
  ['bad in alternate 10 s slots', () => (s) => Math.floor(s / 10) % 2 === 0],
  ['bad in alternate minutes', () => (s) => Math.floor(s / 60) % 2 === 0],
];

function format(s: number | null): string {
  if (s === null) return 'no page';
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

function main(): void {
  for (const kind of ['latency', 'down'] as const) {
    const pages = noisePages(kind, { days: 30, rate: 0.05, seed: 11 });
    console.log(`${kind}: 30 days of 5 % noise with confirmation pings: ${pages.length} pages`);
    const old = noisePages(kind, { days: 30, rate: 0.05, seed: 11, confirm: false });
    console.log(`${kind}: the same without confirmation pings: ${old.length} pages`);
    // Onset phases: the first scheduled ping after the onset comes 1..60 s later.
    const base = 30 * 60 + PING_OFFSET_S;
    const times: number[] = [];
    for (let phase = 0; phase < 60; phase += 1) {
      const t = timeToPage(kind, { onset: base - phase });
      if (t !== null) times.push(t);
    }
    times.sort((a, b) => a - b);
    console.log(
      `${kind}: hard degradation, onset 0..59 s before a scheduled ping: best ${format(times[0] ?? null)}, median ${format(times[30] ?? null)}, worst ${format(times[times.length - 1] ?? null)} (${times.length}/60 paged)`,
    );
    let burstPages = 0;
    let longest = 0;
    for (let length = 10; length < 180; length += 10) {
      for (let phase = 0; phase < 60; phase += 1) {
        if (timeToPage(kind, { onset: base - phase, length }) !== null) burstPages++;
        else longest = Math.max(longest, length);
      }
    }
    console.log(`${kind}: bursts of 10..170 s at every phase: ${burstPages} pages`);
    for (const [name, bad] of INTERMITTENT) {
      const inter: number[] = [];
      for (let phase = 0; phase < 60; phase += 1) {
        const onset = base - phase;
        const pattern = bad(1000 + phase);
        const t = timeToPage(kind, { onset, bad: (s) => pattern(s - onset) });
        if (t !== null) inter.push(t);
      }
      inter.sort((a, b) => a - b);
      console.log(
        `${kind}: 50 % intermittent, ${name}: best ${format(inter[0] ?? null)}, median ${format(inter[30] ?? null)}, worst ${format(inter[inter.length - 1] ?? null)} (${inter.length}/60 paged)`,
      );
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
