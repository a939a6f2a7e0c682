/**
 * Checks for scheduler tests: a ping whose run passes at once, and a lifecycle the tests never
 * schedule (it must be there, as in every registry, but a run of it is a test's mistake).
 */
import type { AnyCheck } from '../../src/kernel/check.js';
import { lifecycleCheck } from '../../src/checks/lifecycle/index.js';
import { pingCheck } from '../../src/checks/ping/index.js';

export const instantPing: AnyCheck = {
  ...pingCheck,
  run: () => Promise.resolve({ outcome: 'pass', reason: null, facts: null }),
};

export const noLifecycle: AnyCheck = {
  ...lifecycleCheck,
  run: () => Promise.reject(new Error('not scheduled in these tests')),
};
