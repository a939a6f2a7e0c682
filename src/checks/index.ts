/** The check registry: adding a check is one file plus one line here. */
import type { Check } from './check.js';
import type { CheckName } from './results.js';
import { lifecycleCheck } from './lifecycle.js';
import { pingCheck } from './ping.js';

export const CHECKS: Readonly<Record<CheckName, Check>> = {
  ping: pingCheck,
  lifecycle: lifecycleCheck,
};
