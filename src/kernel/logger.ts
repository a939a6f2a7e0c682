import type { CheckLogger } from './check.js';

/** A CheckLogger that adds `fields` to every line (a line's own fields win). */
export function withFields(log: CheckLogger, fields: object): CheckLogger {
  return {
    debug: (obj, msg) => log.debug({ ...fields, ...obj }, msg),
    info: (obj, msg) => log.info({ ...fields, ...obj }, msg),
    warn: (obj, msg) => log.warn({ ...fields, ...obj }, msg),
    error: (obj, msg) => log.error({ ...fields, ...obj }, msg),
  };
}
