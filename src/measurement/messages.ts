/**
 * Messages between the measurement thread (scheduler, checks, API client) and the main thread
 * (metrics registry, HTTP server, logging). Plain data only: they cross a worker boundary.
 */
import type { CheckResult, FollowUpEvent } from '../kernel/check.js';
import type { ControlResult } from '../metrics/definitions.js';
import type { MonitorConfig } from '../config/index.js';
import type { ScheduledTaskInfo } from '../scheduler/scheduler.js';
import type { SkipReason } from '../kernel/vocabulary.js';
import type { DriftReport } from '../drift/report.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type MeasurementEvent =
  | { type: 'ready'; schedule: ScheduledTaskInfo[]; leftoverSessions: number }
  | { type: 'result'; result: CheckResult }
  | { type: 'skip'; environment: string; check: string; reason: SkipReason }
  | { type: 'abandoned'; environment: string; check: string }
  | { type: 'follow_up'; environment: string; check: string; event: FollowUpEvent }
  | { type: 'control'; result: ControlResult; durationMs: number }
  | { type: 'sessions_open'; environment: string; count: number }
  | { type: 'session_unrecoverable'; environment: string }
  | { type: 'ledger_writable'; writable: boolean }
  | { type: 'log'; level: LogLevel; fields: Record<string, unknown>; msg: string }
  | { type: 'lag'; samplesMs: number[] }
  | { type: 'contract_drift'; report: DriftReport }
  | { type: 'reloaded'; report: ReloadReport }
  | { type: 'stopped' }
  | { type: 'fatal'; message: string };

export type MeasurementCommand =
  { type: 'stop'; graceMs: number } | { type: 'reload'; config: MonitorConfig };

/** What a configuration reload changed on the measurement thread, by environment name. */
export interface ReloadReport {
  added: string[];
  changed: string[];
  removed: string[];
  unchanged: string[];
  /** The schedules after the reload. */
  schedule: ScheduledTaskInfo[];
}

export interface MeasurementInit {
  config: MonitorConfig;
  userAgent: string;
}

/** Turns Error values in log fields into plain objects shaped like pino's `err` serializer. */
export function plainFields(fields: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error ? plainError(value) : value;
  }
  return out;
}

function plainError(err: Error): Record<string, unknown> {
  const code = (err as NodeJS.ErrnoException).code;
  return {
    type: err.name,
    message: err.message,
    ...(code ? { code } : {}),
    ...(err.stack ? { stack: err.stack } : {}),
    ...(err.cause instanceof Error ? { cause: plainError(err.cause) } : {}),
  };
}
