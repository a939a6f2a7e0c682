/**
 * The chaos and fuzz suite at scale, by hand: the same response fuzzer, SIGKILL loop and
 * Retry-After gates that `test/chaos/` runs in CI with a few cases, with as many cases as asked,
 * printing their counts.
 *
 *   npm run build && npx tsx bench/chaos.ts --fuzz 2000 --kills 60 --seed 20261122
 *   npx tsx bench/chaos.ts --fuzz 0 --kills 0 --gates-environments 8 --gates-seconds 600
 *
 * Exit code 1 when any count of failures or sessions left open is not 0.
 */
import { parseArgs } from 'node:util';
import { formatCounts, runResponseFuzz } from '../test/chaos/fuzz.js';
import { runKillChaos } from '../test/chaos/kill-chaos.js';
import { formatRetryAfterCounts, runRetryAfterChaos } from '../test/chaos/retry-after-chaos.js';

const { values } = parseArgs({
  options: {
    fuzz: { type: 'string', default: '2000' },
    kills: { type: 'string', default: '50' },
    seed: { type: 'string', default: '20261122' },
    concurrency: { type: 'string', default: '8' },
    'gates-environments': { type: 'string', default: '0' },
    'gates-seconds': { type: 'string', default: '600' },
  },
});
const seed = Number(values.seed);
let failed = false;

const fuzzCases = Number(values.fuzz);
if (fuzzCases > 0) {
  const started = performance.now();
  const fuzz = await runResponseFuzz({
    cases: fuzzCases,
    seed,
    concurrency: Number(values.concurrency),
  });
  console.log(
    `${formatCounts(`response fuzz (seed ${seed})`, fuzz)} seconds=${((performance.now() - started) / 1000).toFixed(0)}`,
  );
  for (const detail of fuzz.failureDetails) console.log(`  ${detail}`);
  failed ||= fuzz.failures > 0 || fuzz.sessionsLeftOpen > 0 || fuzz.retryAfterViolations > 0;
}

const kills = Number(values.kills);
if (kills > 0) {
  const started = performance.now();
  const chaos = await runKillChaos({ kills, seed });
  console.log(
    `${formatCounts(`SIGKILL chaos (seed ${seed})`, chaos)} seconds=${((performance.now() - started) / 1000).toFixed(0)}`,
  );
  for (const detail of chaos.failureDetails) console.log(`  ${detail}`);
  failed ||= chaos.failures > 0 || chaos.sessionsLeftOpen > 0;
}
const gated = Number(values['gates-environments']);
if (gated > 0) {
  const started = performance.now();
  const seconds = Number(values['gates-seconds']);
  const gates = await runRetryAfterChaos({
    environments: gated,
    durationMs: seconds * 1000,
    seed,
  });
  console.log(
    `${formatRetryAfterCounts(`Retry-After chaos (seed ${seed}, ${seconds} s)`, gates)} seconds=${((performance.now() - started) / 1000).toFixed(0)}`,
  );
  for (const e of gates.perEnvironment) console.log(`  ${JSON.stringify(e)}`);
  failed ||=
    gates.silentEnvironments > 0 || gates.sessionsLeftOpen > 0 || gates.listenerWarnings > 0;
}
process.exitCode = failed ? 1 : 0;
