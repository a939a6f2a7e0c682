/**
 * Which check intervals cron can fire evenly, and the node-cron expression for each. Shared by the
 * configuration (to reject an interval early, with a message) and the scheduler.
 *
 * node-cron's step fields restart at every field boundary: `*\/45 * * * * *` fires at :00 and :45
 * of each minute, so the gaps alternate 45 s and 15 s. A step is even only when it divides its
 * field's range (60 seconds, 60 minutes, 24 hours), and a 6-field expression has second
 * resolution, so intervals are whole seconds from 1 s to 24 h.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * The 6-field node-cron expression (seconds first) that fires exactly every `ms` milliseconds,
 * aligned to the top of the minute, hour or day: 1 s → `* * * * * *`, 15 s → `*\/15 * * * * *`,
 * 60 s → `0 * * * * *`, 5 m → `0 *\/5 * * * *`, 2 h → `0 0 *\/2 * * *`, 24 h → `0 0 0 * * *`.
 * Returns null when no such expression exists (not whole seconds, under 1 s, over 24 h, or a step
 * that does not divide its field, such as 45 s, 90 s or 7 m).
 */
export function cronForInterval(ms: number): string | null {
  if (!Number.isSafeInteger(ms) || ms < SECOND || ms > DAY || ms % SECOND !== 0) return null;
  if (ms < MINUTE) {
    const step = ms / SECOND;
    if (60 % step !== 0) return null;
    return step === 1 ? '* * * * * *' : `*/${step} * * * * *`;
  }
  if (ms < HOUR) {
    if (ms % MINUTE !== 0) return null;
    const step = ms / MINUTE;
    if (60 % step !== 0) return null;
    return step === 1 ? '0 * * * * *' : `0 */${step} * * * *`;
  }
  if (ms % HOUR !== 0) return null;
  const step = ms / HOUR;
  if (24 % step !== 0) return null;
  if (step === 1) return '0 0 * * * *';
  return step === 24 ? '0 0 0 * * *' : `0 0 */${step} * * *`;
}
