// The young generation's size once it has settled, after work that would grow an unlimited one:
// for the tests that a thread's young-generation limit took effect (the measurement worker's,
// test/measurement/host.test.ts; the CLI's interpreter line, test/cli/interpreter-line.test.ts).
import { getHeapSpaceStatistics } from 'node:v8';

/**
 * Keeps enough objects alive across scavenges that V8 would grow an unlimited young generation
 * well past a few MiB (32 MiB and more), then collects it and reads its size. Mid-loop V8 13
 * (Node 24) reports new space above the limit for a moment (seen up to 12 MiB at a 2 MiB limit)
 * and gives it back at the next scavenge; Node 20 does not. The limit sets the size it settles at.
 * Needs `gc` (`--expose-gc`).
 */
export function settledNewSpaceBytes() {
  const survivors = [];
  for (let round = 0; round < 40; round += 1) {
    for (let i = 0; i < 20_000; i += 1) survivors.push({ round, i, text: `survivor ${i}` });
    if (survivors.length > 200_000) survivors.length = 0;
  }
  globalThis.gc({ type: 'minor', execution: 'sync' });
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
}
