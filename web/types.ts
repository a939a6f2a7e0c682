/**
 * The `/api/history` document as the page reads it: the server's own types, so the two cannot
 * drift apart (type-only imports; nothing of the server is bundled).
 */
export type { Details, PageView, Summary } from '../src/kernel/check.js';
export type { CheckStepJson as Step } from '../src/server/status.js';
export type {
  CheckHistoryJson as CheckHistory,
  HistoryDocument,
  HistoryRun as Run,
  HistorySample as Sample,
} from '../src/server/history.js';

import type { HistoryDocument } from '../src/server/history.js';

export type EnvironmentHistory = HistoryDocument['environments'][string];
export type CheckInfo = HistoryDocument['checks'][number];

import type { UptimeDocument } from '../src/server/uptime.js';

export type { UptimeDocument };
export type UptimeEnvironment = UptimeDocument['environments'][number];
export type UptimeDay = UptimeEnvironment['days'][number];
export type UptimeIncident = UptimeEnvironment['incidents'][number];

import type { DriftReport } from '../src/drift/report.js';

export type { DriftReport };
export type DriftEnvironment = DriftReport['environments'][string];
export type DriftOperation = DriftEnvironment['operations'][string];
export type DriftDifference = DriftOperation['differences'][number];
export type AcrossDifference = DriftReport['across'][number];
