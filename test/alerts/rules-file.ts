/** The alert rules file, parsed once for the tests that inspect it. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { ruleSources } from '../../scripts/rules/assemble-rules.js';
import { readSloSpec, sloRulesFragment } from '../../scripts/rules/slo-rules.js';
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
 * Every alert with the severities its rules must have, read from the sources the rules file is
 * assembled from: the monitor's fragment and each registered check's `rules.yaml`
 * (docs/alerts.md, "Where the rules live"), so a new check's alerts are expected without an edit
 * here. The assembled file must define exactly these, each with a runbook section and rule tests.
 */
export const CONTRACT_ALERTS: Readonly<Record<string, readonly string[]>> = (() => {
  const alerts: Record<string, string[]> = {};
  const texts = [
    ...ruleSources(REPO_ROOT).map((source) => readFileSync(join(REPO_ROOT, source), 'utf8')),
    // The objectives' rules, written from their spec (docs/alerts.md, "Objectives").
    sloRulesFragment(readSloSpec(REPO_ROOT)),
  ];
  for (const text of texts) {
    const file = YAML.parse(text) as {
      groups: Array<{ rules: Rule[] }>;
    };
    for (const rule of file.groups.flatMap((g) => g.rules)) {
      if (rule.alert === undefined) continue;
      const severities = (alerts[rule.alert] ??= []);
      const severity = rule.labels?.['severity'] ?? '';
      if (!severities.includes(severity)) severities.push(severity);
    }
  }
  return alerts;
})();

/**
 * Alerts of the published contract (docs/alerts.md) with their severities: the derived list
 * above must keep them, so a rules fragment that loses one fails.
 */
export const KNOWN_ALERTS: Readonly<Record<string, readonly string[]>> = {
  IsaApiLatencyHigh: ['critical', 'warning'],
  IsaApiDown: ['critical', 'warning'],
  // The objectives' burn-rate tickets, one per objective (docs/alerts.md, "Objectives").
  IsaSloErrorBudgetBurn: ['warning'],
  IsaLifecycleFailing: ['critical', 'warning'],
  IsaCredentialsRejected: ['critical', 'warning'],
  IsaTlsCertificateInvalid: ['critical', 'warning'],
  IsaMonitorDown: ['critical'],
  Watchdog: ['none'],
};

export const RUNBOOK_BASE = 'https://github.com/isa-monitor/isa-monitor/blob/main/docs/runbooks.md';
