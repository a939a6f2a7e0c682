/**
 * The young-generation collector the measurement worker calls before each run: it scavenges when
 * a run would not fit in what is left before V8 scavenges on its own, and only then.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import {
  RUN_HEADROOM_BYTES,
  youngGenerationCollector,
} from '../../src/measurement/young-generation.js';

const youngAvailable = (): number =>
  getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.space_available_size;

describe('youngGenerationCollector', () => {
  it('scavenges when less than a run’s headroom is left, and leaves a roomy young generation alone', () => {
    const collect = youngGenerationCollector();
    const kept: unknown[] = [];
    // Short-lived garbage until the young generation is nearly full (V8 may scavenge on its own
    // meanwhile; the loop goes on until the room is below the headroom).
    while (youngAvailable() >= RUN_HEADROOM_BYTES) {
      for (let i = 0; i < 100; i += 1) kept.push({ i, text: `garbage ${i}` });
      kept.length = 0;
    }
    collect();
    const afterCollect = youngAvailable();
    expect(afterCollect).toBeGreaterThanOrEqual(RUN_HEADROOM_BYTES);
    // With room to spare, nothing is collected: the room only shrinks (by what the call itself
    // allocates).
    collect();
    expect(youngAvailable()).toBeLessThanOrEqual(afterCollect);
  });
});
