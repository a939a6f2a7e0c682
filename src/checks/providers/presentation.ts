/** How a providers run is shown: its summary field and trace lines. */
import { type Summary } from '../../kernel/check.js';
import { PROVIDER_TYPES, type ProvidersFacts, total } from './facts.js';

/** The fields providers adds to `check --json` and `/api/status`. */
export function providersSummary(facts: ProvidersFacts | null): Summary {
  return { providers: facts?.counts ? String(total(facts.counts)) : null };
}

/** What providers adds to the last line of the `check` trace. */
export function providersTrace(facts: ProvidersFacts | null): string[] {
  if (!facts?.counts) return [];
  const lines = [
    `providers ${total(facts.counts)} (${PROVIDER_TYPES.map((t) => `${t} ${facts.counts?.[t] ?? 0}`).join(', ')})`,
  ];
  if (facts.violation) lines.push(`order: ${facts.violation}`);
  if (facts.changed) lines.push('list changed since the previous run');
  return lines;
}
