/** The alert rules file, parsed once for the tests that inspect it. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { REPO_ROOT, RULES_PATH } from '../../scripts/rules/gen-rule-tests.js';

export interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  keep_firing_for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export const RULES_FILE = join(REPO_ROOT, RULES_PATH);
export const rulesText = readFileSync(RULES_FILE, 'utf8');
const parsed = YAML.parse(rulesText) as { groups: Array<{ name: string; rules: Rule[] }> };
export const groups = parsed.groups;
export const allRules: Rule[] = groups.flatMap((g) => g.rules);
export const alertRules = allRules.filter(
  (r): r is Rule & { alert: string } => typeof r.alert === 'string',
);
export const recordingRules = allRules.filter(
  (r): r is Rule & { record: string } => typeof r.record === 'string',
);

/**
 * The alert names of docs/alerts.md, each with the
 * severities its rules must have, in the order of docs/runbooks.md.
 */
export const CONTRACT_ALERTS: Readonly<Record<string, readonly string[]>> = {
  IsaApiLatencyHigh: ['critical', 'warning'],
  IsaApiDown: ['critical', 'warning'],
  IsaApiErrorBudgetBurn: ['warning'],
  // The objectives' burn-rate tickets, one per objective (docs/alerts.md, "Objectives").
  IsaSloErrorBudgetBurn: ['warning'],
  IsaLifecycleFailing: ['critical', 'warning'],
  IsaClosedSessionNotGone: ['warning'],
  IsaQualifyTimeoutsRising: ['warning'],
  IsaCredentialsRejected: ['critical', 'warning'],
  // Added with the tls check (docs/alerts.md).
  IsaTlsCertificateExpiring: ['warning'],
  IsaTlsCertificateInvalid: ['critical', 'warning'],
  IsaApiRateLimited: ['warning'],
  IsaSyntheticSessionsLeaking: ['warning'],
  IsaSyntheticSessionsUnrecoverable: ['warning'],
  // Added with the analytics check (docs/alerts.md).
  IsaAnalyticsIngestLagging: ['warning'],
  // Added with the providers and coverage checks (docs/alerts.md).
  IsaProviderListShrank: ['warning'],
  IsaCoverageAnswersWrong: ['warning'],
  IsaSessionLedgerUnwritable: ['warning'],
  IsaMonitorDown: ['critical'],
  IsaMonitorAbsent: ['critical'],
  IsaMonitorStalled: ['critical'],
  Watchdog: ['none'],
};

export const RUNBOOK_BASE = 'https://github.com/isa-monitor/isa-monitor/blob/main/docs/runbooks.md';
