/**
 * Cron expressions for an interval plus a fixed start offset. The offset is part of the expression
 * (e.g. every 60 s at second 17: `17 * * * * *`), so environments fire at different moments
 * without sleeping before each run.
 */
import { cronForInterval } from '../config/interval.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** A cron field firing every `step` units from `offset` (units run 0..`max`). */
function field(offset: number, max: number, step: number): string {
  if (step === 1) return '*';
  if (step > max) return String(offset);
  return offset === 0 ? `*/${step}` : `${offset}-${max}/${step}`;
}

/**
 * A 6-field node-cron expression firing every `intervalMs`, shifted by `offsetMs` (taken modulo
 * the interval and rounded down to whole seconds). Null when cron cannot fire evenly at that
 * interval: the same rule the configuration validates with (`cronForInterval`).
 */
export function cronWithOffset(intervalMs: number, offsetMs: number): string | null {
  if (cronForInterval(intervalMs) === null) return null;
  const offset = Math.floor((((offsetMs % intervalMs) + intervalMs) % intervalMs) / SECOND);
  const sec = offset % 60;
  const min = Math.floor(offset / 60) % 60;
  if (intervalMs < MINUTE) return `${field(offset, 59, intervalMs / SECOND)} * * * * *`;
  if (intervalMs < HOUR) {
    return `${sec} ${field(Math.floor(offset / 60), 59, intervalMs / MINUTE)} * * * *`;
  }
  return `${sec} ${min} ${field(Math.floor(offset / 3600), 23, intervalMs / HOUR)} * * *`;
}
