/**
 * The drift document: what the daemon's `/api/status` carries under `contract_drift`, what
 * `isa-monitor drift --json` prints and what the status page's contract card shows
 * (docs/drift.md, "The drift document"). One function makes it, from the book in memory or from
 * the file, so the three agree.
 */
import { compareEnvironments, dateAcross, type DatedAcrossDifference } from './across.js';
import { SEVERITIES, type Severity, type SpecView } from './compare.js';
import type { DriftExtras, DriftState } from './store.js';
import { countBySeverity, type Difference, type OperationDrift } from './tracker.js';

/** An operation's baseline, summarised. */
export interface BaselineSummary {
  responses: number;
  paths: number;
  headers: string[];
  contentTypes: string[];
  size: { min: number | null; max: number };
  truncated: boolean;
}

/** One environment's operation in the document. */
export interface OperationReport {
  /** Since when the baseline learns; null once settled. */
  learningSince: string | null;
  baseline: BaselineSummary;
  counts: Record<Severity, number>;
  differences: (Omit<Difference, 'responsesWithout'> & { operation: string })[];
  accepted: { at: string; by: string } | null;
}

/** One environment's open differences by severity: how many, and since when the oldest. */
export type SeveritySummary = Record<Severity, { count: number; since: string | null }>;

export interface DriftReport {
  generated_at: string;
  environments: Record<
    string,
    { bySeverity: SeveritySummary; operations: Record<string, OperationReport> }
  >;
  /** Differences between environments (sandbox against production), dated. */
  across: DatedAcrossDifference[];
}

export interface ReportInput {
  state: DriftState;
  /** Its `across` since-times are updated in place; hand a copy to keep them. */
  extras: DriftExtras;
  now: Date;
  specOf?: (operation: string) => SpecView | undefined;
  /** Only these environments (the configured ones), in this order; all when absent. */
  environments?: readonly string[];
}

/** The drift document of a state. */
export function driftReport(input: ReportInput): DriftReport {
  const names = input.environments ?? Object.keys(input.state);
  const environments: DriftReport['environments'] = {};
  for (const name of names) {
    const operations: Record<string, OperationReport> = {};
    for (const [operation, drift] of Object.entries(input.state[name] ?? {})) {
      operations[operation] = operationReport(operation, drift);
    }
    environments[name] = { bySeverity: severitySummary(operations), operations };
  }
  const chosen = Object.fromEntries(names.map((name) => [name, input.state[name] ?? {}]));
  const facts = Object.fromEntries(
    names.flatMap((name) => {
      const known = input.extras.facts[name];
      return known ? [[name, known]] : [];
    }),
  );
  const found = compareEnvironments({
    operations: chosen,
    facts,
    ...(input.specOf ? { specOf: input.specOf } : {}),
  });
  const across = dateAcross(found, input.extras.across, input.now);
  return { generated_at: input.now.toISOString(), environments, across };
}

function operationReport(operation: string, drift: OperationDrift): OperationReport {
  const { baseline } = drift;
  const differences = Object.values(drift.differences)
    .map(({ responsesWithout: _, ...open }) => ({ operation, ...open }))
    .sort(bySeverityThenPath);
  return {
    learningSince: drift.learningSince,
    baseline: {
      responses: baseline.responses,
      paths: Object.keys(baseline.paths).length,
      headers: Object.keys(baseline.headers).sort(),
      contentTypes: baseline.contentTypes,
      size: {
        min: Number.isFinite(baseline.size.min) ? baseline.size.min : null,
        max: baseline.size.max,
      },
      truncated: baseline.truncated,
    },
    counts: countBySeverity(drift),
    differences,
    accepted: drift.accepted ?? null,
  };
}

function bySeverityThenPath(
  a: { severity: Severity; path: string },
  b: { severity: Severity; path: string },
): number {
  const rank = SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity);
  return rank !== 0 ? rank : a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

function severitySummary(operations: Record<string, OperationReport>): SeveritySummary {
  const summary = Object.fromEntries(
    SEVERITIES.map((severity) => [severity, { count: 0, since: null as string | null }]),
  ) as SeveritySummary;
  for (const operation of Object.values(operations)) {
    for (const open of operation.differences) {
      const entry = summary[open.severity];
      entry.count += 1;
      if (entry.since === null || open.firstSeen < entry.since) entry.since = open.firstSeen;
    }
  }
  return summary;
}
