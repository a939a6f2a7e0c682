/** What a certificate check run adds to its `check --json` document, the trace and the status. */
import type { Summary } from '../../kernel/check.js';
import type { TlsCheckFacts } from './facts.js';

/** The run's keys of the document. */
export function tlsSummary(facts: TlsCheckFacts | null): Summary {
  return {
    result: facts?.result ?? null,
    expires_at:
      facts?.earliestNotAfter == null
        ? null
        : new Date(facts.earliestNotAfter * 1000).toISOString(),
    // Whole days left, as a person counts them; the result is judged on the exact time.
    days_left: facts?.daysLeft == null ? null : Math.floor(facts.daysLeft),
    verified: facts?.verified ?? null,
  };
}

/** The run's lines of the trace. */
export function tlsTrace(facts: TlsCheckFacts | null): string[] {
  if (facts === null) return [];
  if (facts.earliestNotAfter === null) return [`certificate ${facts.result}`];
  const day = new Date(facts.earliestNotAfter * 1000).toISOString().slice(0, 10);
  const verified = facts.verified ? 'verified' : 'not verified';
  const days = Math.floor(facts.daysLeft ?? 0);
  return [`certificate ${facts.result}: expires ${day} (${days} days), ${verified}`];
}
