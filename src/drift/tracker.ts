/**
 * The drift of one environment's operation over time (docs/drift.md, "Learning, open
 * differences, accepting"): the baseline is learned from the first responses, then every
 * response is compared with it. A difference opens at its first sighting, with one bounded,
 * redacted example, and closes once the operation has answered without it for a while; a person
 * accepts what is now seen as the new baseline.
 */
import { compareShapes, type Finding, type SpecView } from './compare.js';
import { emptyShape, learn, merge, shapeOf, type ObservedResponse, type Shape } from './shape.js';
import { exampleAt } from './example.js';

/** How long a baseline learns: both bounds must be passed (docs/drift.md, "Learning"). */
export const LEARNING = { responses: 20, ms: 60 * 60_000 } as const;

/** A difference closes once it was not seen for this many responses and this long. */
export const CLOSING = { responses: 5, ms: 60 * 60_000 } as const;

/** An open difference, dated, with one example. */
export interface Difference extends Finding {
  firstSeen: string;
  lastSeen: string;
  /** One value that showed it, redacted and at most `EXAMPLE_LENGTH` characters. */
  example: string;
  /** Responses since it was last seen. */
  responsesWithout: number;
}

/** What is kept per environment and operation, and written beside the session ledger. */
export interface OperationDrift {
  baseline: Shape;
  /** Since when the baseline learns; null once it is settled. */
  learningSince: string | null;
  /** Everything seen since the baseline settled or was last accepted: what an accept takes in. */
  seen: Shape;
  differences: Record<string, Difference>;
  accepted?: { at: string; by: string };
}

/** A new operation's drift: it learns from its first response on. */
export function newOperationDrift(now: Date): OperationDrift {
  return {
    baseline: emptyShape(),
    learningSince: now.toISOString(),
    seen: emptyShape(),
    differences: {},
  };
}

/** What `observe` needs besides the response. */
export interface Observation {
  response: ObservedResponse;
  /** What the spec says of the operation's responses: required paths, documented values. */
  spec?: SpecView;
  /** Redacts secrets (the API key) from an example's text. */
  redact?: (text: string) => string;
  now: Date;
}

/** Learns from or compares one response, in place; true when the open differences changed. */
export function observe(drift: OperationDrift, observation: Observation): boolean {
  if (drift.learningSince !== null) return learnBaseline(drift, observation);
  const shape = shapeOf(observation.response);
  merge(drift.seen, shape);
  const findings = compareShapes(drift.baseline, shape, observation.spec);
  const opened = record(drift, findings, observation);
  const closed = age(drift, new Set(findings.map(keyOf)), observation.now);
  return opened || closed;
}

function learnBaseline(drift: OperationDrift, { response, now }: Observation): boolean {
  learn(drift.baseline, response);
  const since = Date.parse(drift.learningSince ?? now.toISOString());
  const learned =
    drift.baseline.responses >= LEARNING.responses && now.getTime() - since >= LEARNING.ms;
  if (learned) drift.learningSince = null;
  return false;
}

function keyOf(finding: Finding): string {
  return `${finding.kind} ${finding.path}`;
}

function record(drift: OperationDrift, findings: Finding[], observation: Observation): boolean {
  let opened = false;
  const now = observation.now.toISOString();
  for (const found of findings) {
    const key = keyOf(found);
    const open = drift.differences[key];
    if (open !== undefined) {
      open.lastSeen = now;
      open.responsesWithout = 0;
      open.seen = found.seen;
      continue;
    }
    const example = exampleAt(observation.response, found.path, observation.redact);
    drift.differences[key] = {
      ...found,
      firstSeen: now,
      lastSeen: now,
      example,
      responsesWithout: 0,
    };
    opened = true;
  }
  return opened;
}

function age(drift: OperationDrift, seenNow: ReadonlySet<string>, now: Date): boolean {
  let closed = false;
  for (const [key, open] of Object.entries(drift.differences)) {
    if (seenNow.has(key)) continue;
    open.responsesWithout += 1;
    const quiet = now.getTime() - Date.parse(open.lastSeen);
    if (open.responsesWithout >= CLOSING.responses && quiet >= CLOSING.ms) {
      delete drift.differences[key];
      closed = true;
    }
  }
  return closed;
}

/**
 * Makes what is now seen part of the baseline and clears the open differences: a deliberate
 * act, recorded with who did it. A breaking difference comes back with the next response that
 * shows it, since the spec, not the baseline, decides those.
 */
export function accept(drift: OperationDrift, by: string, now: Date): void {
  merge(drift.baseline, drift.seen);
  drift.seen = emptyShape();
  drift.differences = {};
  drift.learningSince = null;
  drift.accepted = { at: now.toISOString(), by };
}

/** The open differences counted by severity. */
export function countBySeverity(drift: OperationDrift): Record<Finding['severity'], number> {
  const counts = { breaking: 0, warning: 0, info: 0 };
  for (const open of Object.values(drift.differences)) counts[open.severity] += 1;
  return counts;
}
