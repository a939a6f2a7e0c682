/** The `/api/history` document as the page reads it (see `src/server/history.ts`). */

export type Summary = Record<string, string | null>;
export type Details = Record<string, number | null>;

export interface PageView {
  headline?: { classKey: string };
  latencyChart?: boolean;
  timeline?: boolean;
  distribution?: { key: string; label: string; durationKey?: string; durationLabel?: string };
}

export interface Sample {
  seq: number;
  t: number;
  outcome: 'pass' | 'fail';
  duration_ms: number;
  reason: string | null;
  summary: Summary;
  details: Details;
}

export interface Step {
  name: string;
  method: string | null;
  path: string | null;
  status_code: number | null;
  duration_ms: number;
  request_id: string | null;
  error: string | null;
}

export interface Run {
  seq: number;
  check: string;
  environment: string;
  outcome: 'pass' | 'fail';
  reason: string | null;
  duration_ms: number;
  started_at: string | null;
  steps: Step[];
  details: Details;
  [summaryKey: string]: unknown;
}

export interface CheckHistory {
  enabled: boolean;
  interval_ms: number;
  capacity: { samples: number; runs: number };
  samples: Sample[];
  runs: Run[];
}

export interface EnvironmentHistory {
  thresholds_ms: { expected: number; warning: number; critical: number };
  sessions_open: number | null;
  checks: Record<string, CheckHistory>;
}

export interface CheckInfo {
  name: string;
  summary_keys: string[];
  page: PageView;
}

export interface HistoryDocument {
  generated_at: string;
  seq: number;
  window_ms: number;
  checks: CheckInfo[];
  environments: Record<string, EnvironmentHistory>;
}
