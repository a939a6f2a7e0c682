/**
 * How eagerly V8 optimises: set for the whole process (both threads) before any command runs, so
 * it applies however the CLI is started (`isa-monitor`, `node dist/cli.js`, the image).
 *
 * V8 hands a function to its optimising compiler (TurboFan, on background threads) once it has
 * run often enough. A monitor at its default schedule runs each code path once a minute, so that
 * point kept being reached long after start-up, and the compilations cost more CPU than the code
 * they sped up: at 60 s pings, 2-6 ms of V8's background threads per ping. Four times the
 * threshold keeps those compilations to code that is hot (a 1000-environment schedule, `/metrics`
 * renders); measured side by side in bench/LOG.md ("CPU per run").
 */
import { setFlagsFromString } from 'node:v8';

/** How many times V8's default threshold a function must reach before it is optimised. */
export const TIERING_FACTOR = 4;

/**
 * The flag for this V8, or null to leave V8's defaults. Up to V8 11 (Node 20) the threshold is a
 * budget of executed bytecode, 66 KiB. From V8 12 (Node 22, 24: the image) it is a count of
 * invocations with Maglev as a tier between; four times that count was not measured to help (one
 * A/B at 60 s pings on Node 24: more CPU, not less), so those keep the defaults. An unknown flag
 * would be an error on stderr.
 */
export function tieringFlag(v8Version: string): string | null {
  const major = Number(v8Version.split('.')[0]);
  return major <= 11 ? `--interrupt-budget=${TIERING_FACTOR * 67_584}` : null;
}

const flag = tieringFlag(process.versions.v8);
if (flag !== null) setFlagsFromString(flag);
