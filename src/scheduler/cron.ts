/**
 * Cron expressions for an interval plus a fixed start offset. The offset is part of the expression
 * (e.g. every 60 s at second 17: `17 * * * * *`), so environments fire at different moments
 * without sleeping before each run.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

function field(offset: number, max: number, step: number): string {
  if (step === 1) return '*';
  return offset === 0 ? `*/${step}` : `${offset}-${max}/${step}`;
}

/**
 * A 6-field node-cron expression firing every `intervalMs`, shifted by `offsetMs` (taken modulo
 * the interval and rounded down to whole seconds). Null when cron cannot fire evenly at that
 * interval (the configuration rejects such intervals before this is called).
 */
export function cronWithOffset(intervalMs: number, offsetMs: number): string | null {
  if (intervalMs < SECOND || intervalMs % SECOND !== 0) return null;
  const offset = Math.floor((((offsetMs % intervalMs) + intervalMs) % intervalMs) / SECOND);
  const sec = offset % 60;
  const min = Math.floor(offset / 60) % 60;
  const hour = Math.floor(offset / 3600);
  if (intervalMs < MINUTE) {
    const step = intervalMs / SECOND;
    return 60 % step === 0 ? `${field(offset, 59, step)} * * * * *` : null;
  }
  if (intervalMs < HOUR) {
    if (intervalMs % MINUTE !== 0) return null;
    const step = intervalMs / MINUTE;
    return 60 % step === 0 ? `${sec} ${field(Math.floor(offset / 60), 59, step)} * * * *` : null;
  }
  if (intervalMs % HOUR !== 0) return null;
  const step = intervalMs / HOUR;
  if (step === 24) return `${sec} ${min} ${hour} * * *`;
  return 24 % step === 0 ? `${sec} ${min} ${field(hour, 23, step)} * * *` : null;
}
