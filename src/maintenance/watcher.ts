/**
 * The daemon's view of its environments' maintenance windows (docs/configuration.md,
 * "Maintenance windows"). Windows are pure configuration, so the main thread evaluates them itself:
 * once at start, then one unref'd timer per environment that has windows, set for its next edge
 * (a window's start or end) and at most a day ahead. Nothing polls: an idle daemon stays idle, and
 * an environment without windows costs nothing after start-up.
 */
import {
  LOOKAHEAD_MS,
  maintenanceState,
  type MaintenanceState,
  type MaintenanceWindow,
} from './windows.js';

/** How far ahead `/api/status` announces a window. */
export const UPCOMING_MS = 24 * 60 * 60_000;

/** `/api/status`'s `maintenance` entry of one environment (docs/metrics.md). */
export interface MaintenanceJson {
  /** `active`: inside the window now; `upcoming`: it starts within 24 hours. */
  state: 'active' | 'upcoming';
  reason: string;
  /** ISO 8601. */
  start: string;
  end: string;
}

export interface MaintenanceWatcherOptions {
  environments: ReadonlyArray<{ name: string; maintenance?: readonly MaintenanceWindow[] }>;
  /** Called at start for every environment, then whenever one enters or leaves a window. */
  onChange: (environment: string, active: boolean) => void;
  /** Wall clock in ms; injectable for tests. */
  now?: () => number;
}

interface Watched {
  windows: readonly MaintenanceWindow[];
  state: MaintenanceState;
  /** When `state` must be computed again: its next edge, or a day after it was computed. */
  validUntilMs: number;
  timer: NodeJS.Timeout | null;
}

/** Evaluates every environment's windows at their edges and reports changes. */
export class MaintenanceWatcher {
  private readonly watched = new Map<string, Watched>();
  private readonly onChange: (environment: string, active: boolean) => void;
  private readonly now: () => number;
  private stopped = false;

  constructor(opts: MaintenanceWatcherOptions) {
    this.onChange = opts.onChange;
    this.now = opts.now ?? Date.now;
    this.watch(opts.environments);
  }

  /**
   * Watches a reloaded configuration's windows instead (docs/configuration.md, "Reload"): every
   * environment's state is evaluated again and reported, as at start.
   */
  update(environments: MaintenanceWatcherOptions['environments']): void {
    for (const watched of this.watched.values()) {
      if (watched.timer) clearTimeout(watched.timer);
    }
    this.watched.clear();
    this.watch(environments);
  }

  private watch(environments: MaintenanceWatcherOptions['environments']): void {
    for (const env of environments) {
      const windows = env.maintenance ?? [];
      if (windows.length === 0) {
        this.onChange(env.name, false);
        continue;
      }
      const watched: Watched = {
        windows,
        state: { active: null, next: null, nextEdgeMs: null },
        validUntilMs: -Infinity,
        timer: null,
      };
      this.watched.set(env.name, watched);
      this.evaluate(env.name, watched);
    }
  }

  /** Whether `environment` is inside a window now. */
  isActive(environment: string): boolean {
    return this.current(environment)?.active != null;
  }

  /** The environment's active window, or the next one within 24 hours; null when neither. */
  status(environment: string): MaintenanceJson | null {
    const state = this.current(environment);
    if (!state) return null;
    const iso = (ms: number) => new Date(ms).toISOString();
    if (state.active) {
      const { reason, startMs, endMs } = state.active;
      return { state: 'active', reason, start: iso(startMs), end: iso(endMs) };
    }
    if (state.next && state.next.startMs - this.now() <= UPCOMING_MS) {
      const { reason, startMs, endMs } = state.next;
      return { state: 'upcoming', reason, start: iso(startMs), end: iso(endMs) };
    }
    return null;
  }

  /** Clears every timer. */
  stop(): void {
    this.stopped = true;
    for (const watched of this.watched.values()) {
      if (watched.timer) clearTimeout(watched.timer);
      watched.timer = null;
    }
  }

  /** The state now: recomputed when a timer is late (a suspended host) or not yet due. */
  private current(environment: string): MaintenanceState | null {
    const watched = this.watched.get(environment);
    if (!watched) return null;
    if (this.now() >= watched.validUntilMs) this.evaluate(environment, watched);
    return watched.state;
  }

  private evaluate(environment: string, watched: Watched): void {
    const now = this.now();
    const wasActive = watched.state.active !== null;
    const first = watched.validUntilMs === -Infinity;
    watched.state = maintenanceState(watched.windows, now, LOOKAHEAD_MS);
    // The lookahead is two days and the state is recomputed at least daily, so a window starting
    // within the next 24 hours is always known.
    watched.validUntilMs = Math.min(watched.state.nextEdgeMs ?? Infinity, now + UPCOMING_MS);
    const active = watched.state.active !== null;
    if (first || active !== wasActive) this.onChange(environment, active);
    if (watched.timer) clearTimeout(watched.timer);
    watched.timer = null;
    if (this.stopped) return;
    // Timers may fire a little early; `current` and the next evaluation tolerate that.
    watched.timer = setTimeout(
      () => {
        watched.timer = null;
        this.evaluate(environment, watched);
      },
      Math.max(0, watched.validUntilMs - now),
    );
    watched.timer.unref();
  }
}
