/**
 * What a ping finds: its bounded results (which of them count against availability) and its facts,
 * with the phases that were measured.
 */
import type { PhaseTimings } from '../../api/client.js';
import { PHASES, type Phase } from '../../kernel/vocabulary.js';
import { type LatencyClass } from '../../kernel/latency.js';
import { REQUEST_FAILURES } from '../shared/request.js';

/** Result of one ping attempt. */
export const PING_RESULTS = ['ok', ...REQUEST_FAILURES, 'invalid_body'] as const;

export type PingResult = (typeof PING_RESULTS)[number];

/**
 * The scheduled ping results that count as the API failing in the availability record
 * (docs/dashboards.md, "Error budget"): not 401 or 429, which are about our key and our rate.
 */
export const AVAILABILITY_FAILURES: readonly PingResult[] = [
  'server_error',
  'timeout',
  'network_error',
  'unexpected_status',
  'invalid_body',
];

export interface PingFacts {
  result: PingResult;
  durationMs: number;
  phases: PhaseTimings;
  /** Whether this ping opened its connection (connect, and TLS on https, were measured). */
  connectionOpened: boolean;
  up: boolean;
  latencyClass: LatencyClass | null;
}

/**
 * The phases of a ping that were measured, in ms. Phases that did not happen (no name to resolve,
 * no TLS on http://, no response at all) are absent and are not observed (not observed as 0).
 */
export function phaseDurations(phases: PhaseTimings | undefined | null): Array<[Phase, number]> {
  if (phases === undefined || phases === null) return [];
  const present: Array<[Phase, number]> = [];
  for (const phase of PHASES) {
    const ms = phases[phase];
    if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) present.push([phase, ms]);
  }
  return present;
}

/**
 * The scheduled ping results that start a confirmation sequence (besides critical latency): the
 * API failing or not answering. 401, 429, unexpected_status and invalid_body do not: confirmation
 * serves the latency and down pages, which do not count them.
 */
export const CONFIRM_TRIGGER_RESULTS: readonly PingResult[] = [
  'server_error',
  'timeout',
  'network_error',
];
