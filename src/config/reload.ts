/**
 * What a configuration reload can change (docs/configuration.md, "Reload"). Everything about the
 * environments and their checks, the log level and the shutdown timeout take effect; the keys
 * below are fixed at start-up, because the process holds what they name: the bound socket, the
 * open ledger, the `location` label on every series, the control probe's schedule and the status
 * page's buffers. A reload that changes one keeps the running value and says so.
 */
import { isDeepStrictEqual } from 'node:util';
import type { MonitorConfig } from './index.js';

/** The keys a reload cannot change, as the file spells them, and where the config holds them. */
export const FIXED_AT_START = [
  { key: 'listen', of: (config: MonitorConfig) => config.listen },
  { key: 'state_file', of: (config: MonitorConfig) => config.stateFile },
  { key: 'location', of: (config: MonitorConfig) => config.location ?? null },
  { key: 'control', of: (config: MonitorConfig) => config.control ?? null },
  { key: 'history', of: (config: MonitorConfig) => config.history },
] as const;

export interface ReloadPlan {
  /** The configuration to put in force: the new one, with the fixed keys kept. */
  config: MonitorConfig;
  /** The fixed keys the new file changed: kept at their running values. */
  kept: string[];
}

/** The configuration a reload puts in force, given the running one and the file's new one. */
export function planReload(running: MonitorConfig, loaded: MonitorConfig): ReloadPlan {
  const kept = FIXED_AT_START.filter(({ of }) => !isDeepStrictEqual(of(running), of(loaded))).map(
    ({ key }) => key,
  );
  return {
    config: {
      ...loaded,
      listen: running.listen,
      stateFile: running.stateFile,
      location: running.location ?? null,
      control: running.control ?? null,
      history: running.history,
    },
    kept,
  };
}
