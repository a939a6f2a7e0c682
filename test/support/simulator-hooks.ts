/**
 * The simulator a test file shares (test/support/harness.ts), as one hook: started before the
 * file's tests, closed after them, and after each test without the faults the test injected and
 * back on the real clock, so that no test's faults or fake timers reach the next. Apart from the
 * harness, which scripts outside vitest import too (test/chaos/), because these are vitest hooks.
 */
import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import type { SimulatorOptions } from '../../src/simulator/index.js';
import { startTestSimulator, type TestSimulator } from './harness.js';

/**
 * Registers the hooks and returns the file's simulator, whose members are there from the first
 * `beforeAll` on (a `beforeAll` registered after this call may use it).
 */
export function useTestSimulator(options: Partial<SimulatorOptions> = {}): TestSimulator {
  const sim = {} as TestSimulator;
  beforeAll(async () => {
    Object.assign(sim, await startTestSimulator(options));
  });
  afterAll(() => sim.close());
  afterEach(() => {
    sim.simulator.faults.clear();
    vi.useRealTimers();
  });
  return sim;
}
