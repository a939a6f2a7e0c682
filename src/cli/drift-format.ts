/** The text form of the drift document (`isa-monitor drift`, docs/cli.md). */
import type { DriftReport, OperationReport, SeveritySummary } from '../drift/report.js';

/** Lines a person reads: per environment its operations' baselines and differences, then the comparison. */
export function formatDriftReport(report: DriftReport, path: string): string {
  const lines = [`contract drift at ${report.generated_at} (${path})`];
  for (const [environment, { bySeverity, operations }] of Object.entries(report.environments)) {
    lines.push('', `${environment}: ${severities(bySeverity)}`);
    const names = Object.keys(operations).sort();
    if (names.length === 0) lines.push('  no response seen yet');
    for (const name of names) lines.push(...operationLines(name, operations[name]!));
  }
  lines.push('', 'across environments:');
  if (report.across.length === 0) lines.push('  no difference');
  for (const difference of report.across) {
    const where = Object.entries(difference.has)
      .map(([environment, has]) => `${environment}: ${has}`)
      .join('; ');
    const subject = difference.operation
      ? `${difference.operation} ${difference.subject}`
      : difference.subject;
    const lasting = difference.lasting ? ', lasting' : '';
    lines.push(`  ${difference.kind} ${subject}: ${where} (since ${difference.since}${lasting})`);
  }
  return lines.join('\n');
}

function severities(summary: SeveritySummary): string {
  return Object.entries(summary)
    .map(([severity, { count, since }]) =>
      since === null ? `${severity} ${count}` : `${severity} ${count} (since ${since})`,
    )
    .join(', ');
}

function operationLines(name: string, operation: OperationReport): string[] {
  const { baseline } = operation;
  const size =
    baseline.size.min === null ? '' : `, ${baseline.size.min}–${baseline.size.max} bytes`;
  const state =
    operation.learningSince === null ? 'baseline' : `learning since ${operation.learningSince}`;
  const accepted = operation.accepted
    ? `; accepted ${operation.accepted.at} by ${operation.accepted.by}`
    : '';
  const lines = [
    `  ${name}: ${state} of ${baseline.responses} responses, ${baseline.paths} paths${size}${accepted}`,
  ];
  for (const open of operation.differences) {
    lines.push(
      `    ${open.severity} ${open.kind} ${open.path}: baseline ${open.baseline}; now ${open.seen}; ` +
        `since ${open.firstSeen}, last ${open.lastSeen}; example ${open.example}`,
    );
  }
  return lines;
}
