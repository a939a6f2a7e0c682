/** How a coverage run is shown: its summary field and trace lines. */
import { type Summary } from '../../kernel/check.js';
import type { CoverageFacts } from './facts.js';

/** The fields coverage adds to `check --json` and `/api/status`. */
export function coverageSummary(facts: CoverageFacts | null): Summary {
  return {
    providers: facts?.providers === null || facts === null ? null : String(facts.providers),
  };
}


/** What coverage adds to the last line of the `check` trace. */
export function coverageTrace(facts: CoverageFacts | null): string[] {
  if (!facts) return [];
  const lines: string[] = [];
  if (facts.providers !== null) lines.push(`providers ${facts.providers}`);
  if (facts.matchedAreasViolation) lines.push(`matched_areas: ${facts.matchedAreasViolation}`);
  if (facts.refusalStatus !== null) lines.push(`without geography: HTTP ${facts.refusalStatus}`);
  return lines;
}
