/**
 * Fault injection: what can go wrong (the `Fault` kinds), where and how often (a `FaultRule`:
 * environment, network path, endpoint, probability, count), and when (a `TimelineEntry`). Faults come from three sources, consulted in this order for every
 * request: the per-request `X-Isa-Sim-Fault` header, rules added through the admin API, and the
 * scripted timeline. Latencies from all sources add up; of the faults that end a request (status,
 * hang, reset, malformed, html) the first that applies wins; behaviour faults (qualify, not_gone,
 * close_fail, provider_list, coverage, analytics_campaign, drift) are looked up by the handler at the moment they would take effect, so a rule with a
 * `count` is only used up by a request it actually changes.
 */
import { z } from 'zod';
import { qualifyStatusSchema } from '../api/schemas.js';
import { parseDuration } from '../config/duration.js';
import { driftFaultSchema } from './drift.js';

/** The API operations a rule can target (`*` or no endpoint: every request, unmatched ones too). */
export const SIM_ENDPOINTS = [
  'ping',
  'create_session',
  'get_session',
  'poll_services',
  'close_session',
  'service_providers',
  'coverage',
  'analytics',
] as const;
export type SimEndpoint = (typeof SIM_ENDPOINTS)[number];

/** HTTP statuses a `status` fault can answer with. */
export const FAULT_STATUSES = [400, 401, 403, 404, 410, 415, 422, 429, 500, 502, 503, 504] as const;
export type FaultStatus = (typeof FAULT_STATUSES)[number];

/**
 * How a `provider_list` fault changes GET /service_providers: no providers, only the larger half
 * of the parents (with their brands), two parents swapped (units no longer descending), a brand
 * moved away from its parent, or one new provider added (a plain change of content).
 */
export const PROVIDER_LIST_CHANGES = [
  'empty',
  'shrink',
  'misordered',
  'brand_detached',
  'added',
] as const;
export type ProviderListChange = (typeof PROVIDER_LIST_CHANGES)[number];

/**
 * How a `coverage` fault changes GET /coverage: no providers, a `matched_areas` value the query
 * did not ask for, or a request without any geography answered 200 instead of refused.
 */
export const COVERAGE_CHANGES = ['empty', 'foreign_areas', 'geography_optional'] as const;
export type CoverageChange = (typeof COVERAGE_CHANGES)[number];

const latencyFaultSchema = z
  .strictObject({
    kind: z.literal('latency'),
    ms: z.number().min(0).max(600_000).optional(),
    distribution: z
      .strictObject({ min: z.number().min(0), max: z.number().max(600_000) })
      .refine((d) => d.min <= d.max, 'min must not exceed max')
      .optional(),
  })
  .refine(
    (f) => (f.ms === undefined) !== (f.distribution === undefined),
    'give exactly one of ms or distribution',
  );

/** One fault, as JSON in the header, the admin API and the timeline. */
export const faultSchema = z.discriminatedUnion('kind', [
  latencyFaultSchema,
  z.strictObject({
    kind: z.literal('status'),
    status: z.literal(FAULT_STATUSES),
    retryAfterSeconds: z.number().int().min(0).optional(),
    // Whatever text an API might send, hostile included: clients must show it as inert text.
    message: z.string().max(100_000).optional(),
    requestId: z.string().max(100_000).optional(),
  }),
  z.strictObject({ kind: z.literal('hang') }),
  z.strictObject({ kind: z.literal('reset') }),
  z.strictObject({ kind: z.literal('malformed') }),
  z.strictObject({ kind: z.literal('html') }),
  z.strictObject({ kind: z.literal('qualify'), status: qualifyStatusSchema }),
  z.strictObject({ kind: z.literal('not_gone') }),
  z.strictObject({
    kind: z.literal('close_fail'),
    status: z.number().int().min(400).max(599).optional(),
  }),
  z.strictObject({ kind: z.literal('provider_list'), change: z.enum(PROVIDER_LIST_CHANGES) }),
  z.strictObject({ kind: z.literal('coverage'), change: z.enum(COVERAGE_CHANGES) }),
  z.strictObject({ kind: z.literal('ingest_stall') }),
  // The analytics pipeline reports another campaign than the session was created with (null:
  // none), the mismatch the monitor's `analytics_campaign_id` contract check exists to find.
  z.strictObject({
    kind: z.literal('analytics_campaign'),
    campaignId: z.string().min(1).max(100).nullable(),
  }),
  // The API changes under its clients without breaking at once (drift.ts).
  driftFaultSchema,
]);
export type Fault = z.infer<typeof faultSchema>;
export type FaultKind = Fault['kind'];
/** Faults that end the request before the handler runs. */
export type TerminalFault = Extract<
  Fault,
  { kind: 'status' | 'hang' | 'reset' | 'malformed' | 'html' }
>;
/** Faults the handlers consult when they would take effect. */
export type BehaviourKind =
  | 'qualify'
  | 'not_gone'
  | 'close_fail'
  | 'provider_list'
  | 'coverage'
  | 'analytics_campaign'
  | 'drift';
/** Faults that are a state of the service while a rule or timeline entry holds them. */
export type StateKind = 'ingest_stall';

const ruleFields = {
  endpoint: z.enum([...SIM_ENDPOINTS, '*']).optional(),
  // Only requests that came over this network path (`/via/<name>/`): trouble between one
  // monitoring location and the API, which other locations do not see.
  via: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, 'must be a /via/<name>/ path name (letters, digits, _ . -)')
    .optional(),
  probability: z.number().min(0).max(1).optional(),
  count: z.number().int().min(1).optional(),
  fault: faultSchema,
};

/** A stalled ingestion is a state of the environment, whichever way a client comes in. */
const stateFaultHasNoPath = (rule: { via?: string | undefined; fault: Fault }): boolean =>
  rule.via === undefined || rule.fault.kind !== 'ingest_stall';
const stateFaultHasNoPathMessage = {
  message: 'ingest_stall is a state of the environment and cannot be scoped to a network path',
  path: ['via'],
};

/** A global fault rule (admin API). */
export const faultRuleSchema = z
  .strictObject({
    environment: z.string().min(1).optional(),
    ...ruleFields,
  })
  .refine(stateFaultHasNoPath, stateFaultHasNoPathMessage);
export type FaultRule = z.infer<typeof faultRuleSchema>;

/** A timeline rule: a fault rule without environment (the entry names it). */
export const timelineRuleSchema = z
  .strictObject(ruleFields)
  .refine(stateFaultHasNoPath, stateFaultHasNoPathMessage);
export type TimelineRule = z.infer<typeof timelineRuleSchema>;

/** A duration written as in the configuration (`1500ms`, `90s`, `5m`, `1h30m`), or milliseconds. */
export const durationSchema = z.union([
  z.number().min(0),
  z
    .string()
    .refine(
      (text) => parseDuration(text) !== null,
      'must be a duration such as 1500ms, 90s, 5m or 1h30m',
    ),
]);

/**
 * One step of a scripted timeline. At `at` (from the simulator's start) the timeline faults of
 * `environment` (every environment when absent) are replaced by `faults`; an empty list means
 * healthy. An entry with `repeat: true` instead restarts the whole timeline at its time.
 */
export const timelineEntrySchema = z.union([
  z.strictObject({
    at: durationSchema,
    environment: z.string().min(1).optional(),
    faults: z.array(timelineRuleSchema),
  }),
  z.strictObject({ at: durationSchema, repeat: z.literal(true) }),
]);
export type TimelineEntry = z.infer<typeof timelineEntrySchema>;

/** Milliseconds of a timeline offset (already validated by `durationSchema`). */
function offsetMs(at: string | number): number {
  if (typeof at === 'number') return at;
  const ms = parseDuration(at);
  if (ms === null) throw new Error(`invalid duration ${JSON.stringify(at)}`);
  return ms;
}

/** Parses the `X-Isa-Sim-Fault` header: one fault or an array of faults, as JSON. */
export function parseFaultHeader(value: string): { faults: Fault[] } | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return { error: 'X-Isa-Sim-Fault is not valid JSON' };
  }
  const parsed = z.union([faultSchema, z.array(faultSchema)]).safeParse(json);
  if (!parsed.success) return { error: `X-Isa-Sim-Fault: ${z.prettifyError(parsed.error)}` };
  return { faults: Array.isArray(parsed.data) ? parsed.data : [parsed.data] };
}

/** The faults that apply to one request, as resolved when it arrived. */
export interface RequestFaults {
  /** Added latency in milliseconds (sum over every applicable latency fault). */
  latencyMs: number;
  /** The fault that ends the request before the handler, if any. */
  terminal: TerminalFault | null;
  /**
   * Looks up (and uses up) a behaviour fault when a handler is about to let it take effect;
   * `applies` passes over faults of the kind that would change nothing in this request.
   */
  take<K extends BehaviourKind>(
    kind: K,
    applies?: (fault: Extract<Fault, { kind: K }>) => boolean,
  ): Extract<Fault, { kind: K }> | null;
  /** Kinds applied so far, for the log. */
  applied: FaultKind[];
}

/** A rule the controller holds, with its remaining uses. */
export interface ActiveFaultRule extends FaultRule {
  id: string;
  remaining: number | null;
}

interface Candidate {
  rule: {
    endpoint?: string | undefined;
    via?: string | undefined;
    probability?: number | undefined;
    fault: Fault;
  };
  /** Uses a count if the rule has one; false when none is left. */
  use(): boolean;
}

interface CompiledTimeline {
  periodMs: number | null;
  /** Per slot (environment name, or `*` for every environment), entries by time. */
  slots: Map<string, Array<{ atMs: number; index: number; faults: TimelineRule[] }>>;
}

export interface FaultControllerOptions {
  now: () => number;
  timeline?: TimelineEntry[];
  random?: () => number;
}

/** Holds the global fault rules and the timeline, and resolves the faults of each request. */
export class FaultController {
  private readonly rulesById = new Map<string, ActiveFaultRule>();
  private nextId = 1;
  private timeline: CompiledTimeline | null = null;
  private timelineStart: number;
  private timelineEnabled = true;
  private timelineUses = { cycle: -1, remaining: new Map<string, number>() };
  private readonly random: () => number;

  constructor(private readonly options: FaultControllerOptions) {
    this.random = options.random ?? Math.random;
    this.timelineStart = options.now();
    if (options.timeline) this.setTimeline(options.timeline);
  }

  /** Adds a global rule; returns its id. Throws a ZodError when the rule is invalid. */
  add(rule: FaultRule): string {
    const parsed = faultRuleSchema.parse(rule);
    const id = `f${this.nextId++}`;
    this.rulesById.set(id, { ...parsed, id, remaining: parsed.count ?? null });
    return id;
  }

  /** Removes one global rule; false when there is none with this id. */
  remove(id: string): boolean {
    return this.rulesById.delete(id);
  }

  /** Removes every global rule (the timeline is left alone). */
  clear(): void {
    this.rulesById.clear();
  }

  /** The global rules still in force. */
  rules(): ActiveFaultRule[] {
    return [...this.rulesById.values()].map((r) => ({ ...r }));
  }

  /** Replaces the timeline (null removes it) and restarts it from now. Throws when invalid. */
  setTimeline(entries: TimelineEntry[] | null): void {
    this.timeline = entries ? compileTimeline(z.array(timelineEntrySchema).parse(entries)) : null;
    this.restartTimeline();
  }

  /** Starts the timeline over from now. */
  restartTimeline(): void {
    this.timelineStart = this.options.now();
    this.timelineEnabled = true;
    this.timelineUses = { cycle: -1, remaining: new Map() };
  }

  /** Pauses or resumes the timeline (while paused it contributes no faults). */
  setTimelineEnabled(enabled: boolean): void {
    this.timelineEnabled = enabled;
  }

  /** What the admin API reports: rules, and the timeline's position and active faults. */
  describe(): {
    rules: ActiveFaultRule[];
    timeline: null | {
      enabled: boolean;
      elapsedMs: number;
      periodMs: number | null;
      active: Record<string, TimelineRule[]>;
    };
  } {
    if (!this.timeline) return { rules: this.rules(), timeline: null };
    const active: Record<string, TimelineRule[]> = {};
    for (const slot of this.timeline.slots.keys())
      active[slot] = this.activeTimelineEntry(slot)?.faults ?? [];
    return {
      rules: this.rules(),
      timeline: {
        enabled: this.timelineEnabled,
        elapsedMs: this.options.now() - this.timelineStart,
        periodMs: this.timeline.periodMs,
        active,
      },
    };
  }

  /** The timeline rules in force for an environment now (its own slot plus the `*` slot). */
  timelineFaults(environment: string): TimelineRule[] {
    if (!this.timeline || !this.timelineEnabled) return [];
    return [environment, '*'].flatMap((slot) => this.activeTimelineEntry(slot)?.faults ?? []);
  }

  /**
   * True while a global rule or the timeline holds a fault of `kind` for `environment` (a state of
   * the service, such as stalled ingestion, rather than something one request draws).
   */
  inForce(environment: string, kind: StateKind): boolean {
    const held = (rule: { fault: Fault }): boolean => rule.fault.kind === kind;
    return (
      [...this.rulesById.values()].some(
        (r) => (r.environment === undefined || r.environment === environment) && held(r),
      ) || this.timelineFaults(environment).some(held)
    );
  }

  /**
   * Resolves the faults of one request from its header faults, the rules and the timeline. `via`
   * is the network path it came over (null: the direct way); rules scoped to another path, or to
   * a path when it came directly, pass it by.
   */
  resolve(request: {
    environment: string;
    via?: string | null;
    endpoint: SimEndpoint | null;
    headerFaults: Fault[];
  }): RequestFaults {
    const candidates = [
      ...request.headerFaults.map((fault): Candidate => ({ rule: { fault }, use: () => true })),
      ...this.ruleCandidates(request.environment),
      ...this.timelineCandidates(request.environment),
    ].filter(
      (c) =>
        (c.rule.endpoint === undefined ||
          c.rule.endpoint === '*' ||
          c.rule.endpoint === request.endpoint) &&
        (c.rule.via === undefined || c.rule.via === request.via),
    );

    const applied: FaultKind[] = [];
    // A rule applies when its dice roll and its count allow; the roll comes first so a rule that
    // does not fire keeps its count.
    const fires = (c: Candidate): boolean => this.random() < (c.rule.probability ?? 1) && c.use();

    let latencyMs = 0;
    let terminal: TerminalFault | null = null;
    for (const c of candidates) {
      const fault = c.rule.fault;
      if (fault.kind === 'latency') {
        if (!fires(c)) continue;
        latencyMs +=
          fault.ms ?? this.between(fault.distribution?.min ?? 0, fault.distribution?.max ?? 0);
        applied.push('latency');
      } else if (isTerminal(fault) && terminal === null && fires(c)) {
        terminal = fault;
        applied.push(fault.kind);
      }
    }
    return {
      latencyMs,
      terminal,
      applied,
      take: <K extends BehaviourKind>(
        kind: K,
        applies: (fault: Extract<Fault, { kind: K }>) => boolean = () => true,
      ) => {
        for (const c of candidates) {
          const fault = c.rule.fault;
          if (fault.kind === kind && applies(fault as Extract<Fault, { kind: K }>) && fires(c)) {
            applied.push(kind);
            return c.rule.fault as Extract<Fault, { kind: K }>;
          }
        }
        return null;
      },
    };
  }

  private between(min: number, max: number): number {
    return min + this.random() * (max - min);
  }

  private ruleCandidates(environment: string): Candidate[] {
    return [...this.rulesById.values()]
      .filter((r) => r.environment === undefined || r.environment === environment)
      .map((r) => ({
        rule: r,
        use: () => {
          if (r.remaining === null) return true;
          if (r.remaining <= 0) return false;
          r.remaining -= 1;
          // A used-up rule expires.
          if (r.remaining === 0) this.rulesById.delete(r.id);
          return true;
        },
      }));
  }

  private timelineCandidates(environment: string): Candidate[] {
    if (!this.timeline || !this.timelineEnabled) return [];
    const { cycle } = this.position();
    if (this.timelineUses.cycle !== cycle) this.timelineUses = { cycle, remaining: new Map() };
    const uses = this.timelineUses.remaining;
    return [environment, '*'].flatMap((slot) => {
      const entry = this.activeTimelineEntry(slot);
      if (!entry) return [];
      return entry.faults.map((rule, i): Candidate => {
        const key = `${slot}:${entry.index}:${i}`;
        return {
          rule,
          use: () => {
            if (rule.count === undefined) return true;
            const left = uses.get(key) ?? rule.count;
            if (left <= 0) return false;
            uses.set(key, left - 1);
            return true;
          },
        };
      });
    });
  }

  private position(): { cycle: number; offsetMs: number } {
    const elapsed = Math.max(0, this.options.now() - this.timelineStart);
    const period = this.timeline?.periodMs ?? null;
    if (period === null || period <= 0) return { cycle: 0, offsetMs: elapsed };
    return { cycle: Math.floor(elapsed / period), offsetMs: elapsed % period };
  }

  private activeTimelineEntry(slot: string): { index: number; faults: TimelineRule[] } | null {
    const entries = this.timeline?.slots.get(slot);
    if (!entries || entries.length === 0) return null;
    const { cycle, offsetMs } = this.position();
    let current: (typeof entries)[number] | null = null;
    for (const e of entries) if (e.atMs <= offsetMs) current = e;
    // In a repeating timeline, the time before a slot's first entry continues its last entry.
    if (current === null && cycle > 0) current = entries[entries.length - 1] ?? null;
    return current;
  }
}

function isTerminal(fault: Fault): fault is TerminalFault {
  return (
    fault.kind === 'status' ||
    fault.kind === 'hang' ||
    fault.kind === 'reset' ||
    fault.kind === 'malformed' ||
    fault.kind === 'html'
  );
}

function compileTimeline(entries: TimelineEntry[]): CompiledTimeline {
  let periodMs: number | null = null;
  const slots = new Map<string, Array<{ atMs: number; index: number; faults: TimelineRule[] }>>();
  entries.forEach((entry, index) => {
    const atMs = offsetMs(entry.at);
    if ('repeat' in entry) {
      periodMs = periodMs === null ? atMs : Math.min(periodMs, atMs);
      return;
    }
    const slot = entry.environment ?? '*';
    const list = slots.get(slot) ?? [];
    list.push({ atMs, index, faults: entry.faults });
    slots.set(slot, list);
  });
  for (const list of slots.values()) list.sort((a, b) => a.atMs - b.atMs || a.index - b.index);
  return { periodMs, slots };
}
