/**
 * The young-generation collector the measurement worker calls before each run: it scavenges when
 * a run would not fit in what is left before V8 scavenges on its own, and only then. V8's
 * `GCProfiler` lists the collections made during each call, so a call that collects and one that
 * does not are told apart by what happened, not by a heap size either could leave.
 */
import { GCProfiler, getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import {
  RUN_HEADROOM_BYTES,
  youngGenerationCollector,
} from '../../src/measurement/young-generation.js';

const youngAvailable = (): number =>
  getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.space_available_size;

/** Runs `fn` and returns the kinds of the collections V8 made meanwhile, e.g. `['Scavenge']`. */
function collectionsDuring(fn: () => void): string[] {
  const profiler = new GCProfiler();
  profiler.start();
  fn();
  return profiler.stop().statistics.map((collection) => collection.gcType);
}

/** Short-lived garbage until less than a run's headroom is left before V8 would scavenge. */
function fillYoungGeneration(): void {
  const kept: unknown[] = [];
  // V8 may scavenge on its own meanwhile; the loop goes on until the room is below the headroom.
  while (youngAvailable() >= RUN_HEADROOM_BYTES) {
    for (let i = 0; i < 100; i += 1) kept.push({ i, text: `garbage ${i}` });
    kept.length = 0;
  }
}

describe('youngGenerationCollector', () => {
  it('scavenges once when less than a run’s headroom is left, leaving at least that', () => {
    const collect = youngGenerationCollector();
    fillYoungGeneration();
    expect(collectionsDuring(collect)).toEqual(['Scavenge']);
    expect(youngAvailable()).toBeGreaterThanOrEqual(RUN_HEADROOM_BYTES);
  });

  it('leaves a roomy young generation alone: no collection at all', () => {
    const collect = youngGenerationCollector();
    fillYoungGeneration();
    collect();
    // Now there is room to spare.
    expect(youngAvailable()).toBeGreaterThanOrEqual(RUN_HEADROOM_BYTES);
    expect(collectionsDuring(collect)).toEqual([]);
  });
});
