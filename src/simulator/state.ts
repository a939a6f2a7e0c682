/**
 * The simulator's state: sessions with their qualify progression, the recent-lookup cache of
 * buildings, and each client's analytics history. Time is read from an injected clock and every
 * time-dependent answer (qualify status, updated_at) is computed from it on demand, so nothing
 * here needs a timer and tests can move the clock.
 */
import type { QualifyStatus, SessionRequest, SessionStatus } from '../api/schemas.js';
import {
  buildingKey,
  formatServiceAddress,
  hashedBehaviour,
  normalizeAddress,
  resolvesAfterMs,
  stagesFor,
  statusAt,
  testAddressBehaviour,
  type QualifyStage,
  type SessionParams,
} from './addresses.js';
import { recordForSession, seedAnalytics, type AnalyticsRecord } from './analytics.js';
import { providersForBuilding } from './catalog.js';
import { hash32, newSessionToken } from './random.js';
import { randomUUID } from 'node:crypto';

/** One session, as the simulator keeps it. */
export interface SessionRecord {
  readonly token: string;
  /** Environment the session belongs to (`default` at the root); tokens do not cross environments. */
  readonly environment: string;
  /** Opaque id of the API key that created the session (never the key itself). */
  readonly clientId: string;
  /** UUID of the session in the analytics endpoints. */
  readonly analyticsId: string;
  readonly params: SessionParams;
  readonly serviceAddress: string;
  readonly mdu: boolean;
  readonly building: string;
  readonly createdAt: number;
  /** Qualify progression, relative to `createdAt`. */
  readonly stages: readonly QualifyStage[];
  /** Answered from the recent-lookup cache: providers and the short meta form at creation. */
  readonly fromCache: boolean;
  readonly providerIds: readonly string[];
  readonly serviceDataSet: string;
  status: SessionStatus;
  closedAt: number | null;
}

export interface SimulatorStateOptions {
  now: () => number;
  /** Delay of one pending (or retry_later) stage of a new lookup; drawn per session. */
  qualifyDelayMs: () => number;
  /** How long a building counts as "looked up recently". Default 15 minutes. */
  recentLookupMs?: number;
  /** How long a new session takes to appear in analytics. Default 0. */
  analyticsIngestDelayMs?: number;
}

export interface CreateSessionInput {
  environment: string;
  clientId: string;
  request: SessionRequest;
  /** A `qualify` fault at creation: the session keeps this status (see docs/simulator.md). */
  forcedStatus?: QualifyStatus;
}

interface RecentLookup {
  resolvesAt: number;
  expiresAt: number;
}

/** Closed sessions beyond this many are forgotten, oldest first, to bound memory. */
const MAX_SESSIONS = 20_000;

/** The simulator's mutable state. Create one per simulator; `reset()` empties it. */
export class SimulatorState {
  private readonly sessionsByToken = new Map<string, SessionRecord>();
  private readonly recentLookups = new Map<string, RecentLookup>();
  private readonly analyticsByClient = new Map<string, AnalyticsRecord[]>();
  /** Per environment: since when analytics ingestion has been stalled (absent: not stalled). */
  private readonly ingestionStalledSince = new Map<string, number>();
  private readonly recentLookupMs: number;
  private epochMs: number;

  constructor(private readonly options: SimulatorStateOptions) {
    this.recentLookupMs = options.recentLookupMs ?? 15 * 60_000;
    this.epochMs = options.now();
  }

  /** When the simulator started (or was last reset); seeded history ends here. */
  get epoch(): number {
    return this.epochMs;
  }

  /** Forgets every session, lookup and analytics record and restarts the seeded history. */
  reset(): void {
    this.sessionsByToken.clear();
    this.recentLookups.clear();
    this.analyticsByClient.clear();
    this.ingestionStalledSince.clear();
    this.epochMs = this.options.now();
  }

  /** Opens a session for a validated request (the 503 test address is handled by the caller). */
  createSession(input: CreateSessionInput): SessionRecord {
    const now = this.options.now();
    const params = normalizeAddress(input.request);
    const building = buildingKey(params);
    const { stages, fromCache } = this.planFor(
      input.environment,
      params,
      building,
      now,
      input.forcedStatus,
    );
    const session: SessionRecord = {
      token: newSessionToken(),
      environment: input.environment,
      clientId: input.clientId,
      analyticsId: randomUUID(),
      params,
      serviceAddress: formatServiceAddress(params),
      mdu: params.street2 !== null,
      building,
      createdAt: now,
      stages,
      fromCache,
      providerIds: providersForBuilding(building),
      serviceDataSet: serviceDataSetFor(input.environment),
      status: 'open',
      closedAt: null,
    };
    this.sessionsByToken.set(session.token, session);
    this.analyticsFor(input.environment, input.clientId).push(
      recordForSession(session, session.analyticsId),
    );
    this.forgetOldSessions();
    return session;
  }

  private planFor(
    environment: string,
    params: SessionParams,
    building: string,
    now: number,
    forced: QualifyStatus | undefined,
  ): { stages: QualifyStage[]; fromCache: boolean } {
    if (forced) return { stages: [{ status: forced }], fromCache: false };
    const behaviour = testAddressBehaviour(params.street1);
    if (behaviour === 'instant') return { stages: stagesFor('instant', 0), fromCache: true };
    if (behaviour !== null && behaviour !== 'validation_down') {
      return { stages: stagesFor(behaviour, this.options.qualifyDelayMs()), fromCache: false };
    }
    // An ordinary address: reuse a recent lookup of the building, or start a new one.
    const key = `${environment}|${building}`;
    const recent = this.recentLookups.get(key);
    if (recent && recent.expiresAt > now) {
      if (now >= recent.resolvesAt) return { stages: [{ status: 'available' }], fromCache: true };
      // The lookup is still running: this session resolves together with it.
      return {
        stages: [{ status: 'pending', forMs: recent.resolvesAt - now }, { status: 'available' }],
        fromCache: false,
      };
    }
    const stages = stagesFor(hashedBehaviour(building), this.options.qualifyDelayMs());
    const resolvesAfter = resolvesAfterMs(stages);
    if (stages[stages.length - 1]?.status === 'available' && resolvesAfter !== null) {
      this.recentLookups.set(key, {
        resolvesAt: now + resolvesAfter,
        expiresAt: now + this.recentLookupMs,
      });
    }
    return { stages, fromCache: false };
  }

  /** The session with this token in this environment, open or closed. */
  findSession(environment: string, token: string): SessionRecord | undefined {
    const session = this.sessionsByToken.get(token);
    return session?.environment === environment ? session : undefined;
  }

  /** Closes an open session; closing is final. */
  closeSession(session: SessionRecord): void {
    if (session.status === 'closed') return;
    session.status = 'closed';
    session.closedAt = this.options.now();
  }

  /** The session's qualify status now. */
  qualifyStatus(session: SessionRecord): QualifyStatus {
    return statusAt(session.stages, this.options.now() - session.createdAt);
  }

  /** Last change of the session: creation, qualify resolution or closing. */
  updatedAt(session: SessionRecord): number {
    const now = this.options.now();
    const resolvesAfter = resolvesAfterMs(session.stages);
    const resolvedAt =
      resolvesAfter !== null && session.createdAt + resolvesAfter <= now
        ? session.createdAt + resolvesAfter
        : 0;
    return Math.max(session.createdAt, resolvedAt, session.closedAt ?? 0);
  }

  /** Every session, optionally filtered, oldest first. */
  sessions(filter: { environment?: string; status?: SessionStatus } = {}): SessionRecord[] {
    return [...this.sessionsByToken.values()].filter(
      (s) =>
        (filter.environment === undefined || s.environment === filter.environment) &&
        (filter.status === undefined || s.status === filter.status),
    );
  }

  /** Sessions not yet closed (a client that cleans up leaves none behind). */
  openSessions(environment?: string): SessionRecord[] {
    return this.sessions({ status: 'open', ...(environment !== undefined ? { environment } : {}) });
  }

  /** A client's analytics history in one environment (seeded on first use). */
  analyticsFor(environment: string, clientId: string): AnalyticsRecord[] {
    const key = `${environment}|${clientId}`;
    let records = this.analyticsByClient.get(key);
    if (!records) {
      records = seedAnalytics(hash32(`analytics:${key}`), this.epochMs);
      this.analyticsByClient.set(key, records);
    }
    return records;
  }

  /**
   * Notes whether analytics ingestion is stalled in `environment` now (called for every request).
   * While stalled, nothing created after the stall began becomes visible; when it ends, the
   * backlog appears at once.
   */
  noteIngestionStall(environment: string, stalled: boolean): void {
    if (!stalled) this.ingestionStalledSince.delete(environment);
    else if (!this.ingestionStalledSince.has(environment)) {
      this.ingestionStalledSince.set(environment, this.options.now());
    }
  }

  /** Whether a record has reached analytics: seeded ones have; live ones after the ingest delay. */
  analyticsIngested(environment: string, record: AnalyticsRecord): boolean {
    if (record.session === null) return true;
    const due = record.createdAt + (this.options.analyticsIngestDelayMs ?? 0);
    const stalledSince = this.ingestionStalledSince.get(environment);
    // Ingested before the stall began, or (not stalled) by now.
    return due <= (stalledSince ?? this.options.now());
  }

  /** Last change of an analytics record (live sessions change when resolved or closed). */
  analyticsUpdatedAt(record: AnalyticsRecord): number {
    return record.session ? this.updatedAt(record.session) : record.updatedAt;
  }

  private forgetOldSessions(): void {
    if (this.sessionsByToken.size <= MAX_SESSIONS) return;
    for (const [token, session] of this.sessionsByToken) {
      if (this.sessionsByToken.size <= MAX_SESSIONS) break;
      if (session.status === 'closed') this.sessionsByToken.delete(token);
    }
  }
}

/** The stable numeric `service_data_set` of an environment. */
export function serviceDataSetFor(environment: string): string {
  return String(4100 + (hash32(`dataset:${environment}`) % 900));
}
