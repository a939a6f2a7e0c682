/**
 * Address handling of the simulator: normalizing a session request into `session_params`, the
 * building key behind the recent-lookup cache, and the qualify plan of an address — the
 * documented test addresses (like a payment sandbox's test cards) and the hash-chosen outcome of
 * every other address.
 */
import type { QualifyStatus, SessionRequest, UsState } from '../api/schemas.js';
import { stateForZip, stateInfo } from './geography.js';
import { hash32 } from './random.js';

/** `meta.session_params`: the normalized address. */
export interface SessionParams {
  street1: string;
  street2: string | null;
  city: string;
  state: string;
  zip: string;
  latitude: string;
  longitude: string;
  campaign_id: string | null;
}

const collapse = (s: string): string => s.trim().replace(/\s+/g, ' ');

/**
 * Fills in what the request leaves out (state from the ZIP, city and ZIP from the state) the way
 * an address validator would, and formats coordinates as the API does (strings).
 */
export function normalizeAddress(req: SessionRequest): SessionParams {
  const state: UsState = (req.state as UsState | undefined) ?? stateForZip(req.zip ?? '00000');
  const info = stateInfo(state);
  const street1 = collapse(req.street1);
  // Coordinates: the client's when given, else near the state's representative city, jittered by
  // the address so different addresses do not share a point.
  const h = hash32(`coords:${street1.toLowerCase()}|${req.zip ?? ''}|${req.city ?? ''}`);
  const jitter = (bits: number): number => (((h >>> bits) & 0xff) / 255 - 0.5) / 10;
  const latitude = req.latitude ?? info.latitude + jitter(0);
  const longitude = req.longitude ?? info.longitude + jitter(8);
  return {
    street1,
    street2: req.street2 !== undefined ? collapse(req.street2) : null,
    city: req.city !== undefined ? collapse(req.city) : info.city,
    state,
    zip: req.zip ?? info.zip,
    latitude: latitude.toFixed(6),
    longitude: longitude.toFixed(6),
    campaign_id: req.campaign_id ?? null,
  };
}

/** The one-line formatted address of `meta.service_address`. */
export function formatServiceAddress(p: SessionParams): string {
  return [p.street1, p.street2, p.city, `${p.state} ${p.zip}`].filter(Boolean).join(', ');
}

/**
 * Identifies a building: street line and 5-digit ZIP, without the unit, because a provider
 * lookup is per building. Two units of one building share the recent-lookup cache.
 */
export function buildingKey(p: SessionParams): string {
  return `${p.street1.toLowerCase()}|${p.zip.slice(0, 5)}`;
}

/** One stage of a session's qualify progression; `forMs` absent means "from here on". */
export interface QualifyStage {
  status: QualifyStatus;
  forMs?: number;
}

/** How an address qualifies over time after its session is created. */
export interface QualifyPlan {
  stages: QualifyStage[];
  /** Answer straight from the recent-lookup cache: providers in the creation response. */
  fromCache: boolean;
}

/** What the documented test addresses do; `validation_down` answers 503 instead of a session. */
export type TestAddressBehaviour =
  | 'instant'
  | 'pending_then_available'
  | 'pending_then_no_service'
  | 'pending_then_failed'
  | 'retry_then_pending_then_available'
  | 'pending_forever'
  | 'validation_down';

/** The documented test addresses (street1, matched case-insensitively; any valid ZIP/city/state). */
export const TEST_ADDRESSES: ReadonlyArray<{ street1: string; behaviour: TestAddressBehaviour }> = [
  { street1: '1 Instant Way', behaviour: 'instant' },
  { street1: '2 Pending Ave', behaviour: 'pending_then_available' },
  { street1: '3 No Service Rd', behaviour: 'pending_then_no_service' },
  { street1: '4 Failed Blvd', behaviour: 'pending_then_failed' },
  { street1: '5 Retry Ln', behaviour: 'retry_then_pending_then_available' },
  { street1: '6 Forever Pending Ct', behaviour: 'pending_forever' },
  { street1: '7 Validation Down Dr', behaviour: 'validation_down' },
];

/** Retry-After (seconds) of the 503 that `7 Validation Down Dr` produces. */
export const VALIDATION_DOWN_RETRY_AFTER_SECONDS = 30;

/** The test-address behaviour of a street line, or null for an ordinary address. */
export function testAddressBehaviour(street1: string): TestAddressBehaviour | null {
  const key = collapse(street1).toLowerCase();
  return TEST_ADDRESSES.find((t) => t.street1.toLowerCase() === key)?.behaviour ?? null;
}

/** The stages each behaviour walks through, given the session's resolution delay. */
export function stagesFor(
  behaviour: Exclude<TestAddressBehaviour, 'validation_down'>,
  delayMs: number,
): QualifyStage[] {
  switch (behaviour) {
    case 'instant':
      return [{ status: 'available' }];
    case 'pending_then_available':
      return [{ status: 'pending', forMs: delayMs }, { status: 'available' }];
    case 'pending_then_no_service':
      return [{ status: 'pending', forMs: delayMs }, { status: 'no_service' }];
    case 'pending_then_failed':
      return [{ status: 'pending', forMs: delayMs }, { status: 'failed' }];
    case 'retry_then_pending_then_available':
      return [
        { status: 'retry_later', forMs: delayMs },
        { status: 'pending', forMs: delayMs },
        { status: 'available' },
      ];
    case 'pending_forever':
      return [{ status: 'pending' }];
  }
}

/**
 * The behaviour of an ordinary address, chosen by a hash of its building so it is the same in
 * every run: mostly available after the delay, sometimes no service, retry_later or failed.
 */
export function hashedBehaviour(
  building: string,
): Exclude<TestAddressBehaviour, 'validation_down' | 'instant' | 'pending_forever'> {
  const bucket = hash32(`qualify:${building}`) % 100;
  if (bucket < 88) return 'pending_then_available';
  if (bucket < 93) return 'pending_then_no_service';
  if (bucket < 97) return 'retry_then_pending_then_available';
  return 'pending_then_failed';
}

/** The qualify status of a plan `elapsedMs` after the session was created. */
export function statusAt(stages: readonly QualifyStage[], elapsedMs: number): QualifyStatus {
  let end = 0;
  for (const stage of stages) {
    if (stage.forMs === undefined) return stage.status;
    end += stage.forMs;
    if (elapsedMs < end) return stage.status;
  }
  return stages[stages.length - 1]?.status ?? 'pending';
}

/** When (ms after creation) a plan reaches its final stage, or null if it never does. */
export function resolvesAfterMs(stages: readonly QualifyStage[]): number | null {
  let end = 0;
  for (const stage of stages) {
    if (stage.forMs === undefined)
      return stage.status === 'pending' || stage.status === 'retry_later' ? null : end;
    end += stage.forMs;
  }
  return end;
}
