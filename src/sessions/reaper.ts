/**
 * Closes synthetic sessions the ledger lists for this process: what a process that is gone left
 * behind (adopted from the ledger first) and what a run's own cleanup could not close.
 *
 * - Only a real close counts (`confirmsClose`): a 200, or a 410 with the API's error envelope.
 *   Anything else (400, 404, 401, 5xx, a 410 without the envelope, a timeout) leaves the token
 *   listed and retries it with exponential backoff from 1 s up to 5 minutes, for as long as the
 *   process runs; `isa_synthetic_sessions_open` shows it and `IsaSyntheticSessionsLeaking` tickets
 *   it after 30 minutes (docs/runbooks.md says how to settle it with the API operator).
 * - Every close is admitted like any request (`admit`): Retry-After gate, budget, gate again.
 *   A sweep never waits for a closed gate: it stops, and the next sweep goes on. That keeps
 *   start-up, `check` and shutdown from waiting out a long Retry-After.
 * - Tokens a run is still using are never closed under it (`hold`/`release`).
 */
import type { ApiClient } from '../api/client.js';
import type { CheckLogger } from '../kernel/check.js';
import { admit, RetryAfterError } from '../limits/admission.js';
import type { BackoffGate } from '../limits/backoff-gate.js';
import type { RequestBudget } from '../limits/request-budget.js';
import type { CreateIntent, SessionLedger } from './ledger.js';
import { confirmsClose } from './tokens.js';
import { closeSession } from '../api/sessions.js';

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 5 * 60_000;

export interface SessionReaperOptions {
  environment: string;
  client: ApiClient;
  ledger: SessionLedger;
  budget: RequestBudget;
  gate: BackoffGate;
  log: CheckLogger;
  timeoutMs: number;
  /** Sessions that may be open on the API with a token nobody received (see ledger intents). */
  onUnrecoverable?: (intent: CreateIntent) => void;
  now?: () => number;
}

export class SessionReaper {
  private readonly retries = new Map<string, { attempts: number; nextAt: number }>();
  private readonly held = new Set<string>();
  private readonly now: () => number;

  constructor(private readonly opts: SessionReaperOptions) {
    this.now = opts.now ?? (() => performance.now());
  }

  /** Keeps the reaper away from a token a run is still using. */
  hold(token: string): void {
    this.held.add(token);
  }

  release(token: string): void {
    this.held.delete(token);
  }

  /**
   * Adopts what dead processes left, then tries to close every listed token whose backoff has
   * elapsed (all of them with `force`). Stops early when the gate is closed. Never throws;
   * returns how many of this process's sessions are still open. `timeoutMs`: each close's request
   * timeout, when a run's own bounds it rather than the reaper's (docs/configuration.md).
   */
  async sweep(
    opts: { force?: boolean; signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<number> {
    const { ledger, environment } = this.opts;
    // A forced sweep (start-up, shutdown) always reads the ledger; the others may stop at a stat.
    await this.adopt(opts.force === true);
    for (const entry of ledger.list(environment)) {
      if (opts.signal?.aborted || !this.opts.gate.isOpen()) break;
      if (this.held.has(entry.token)) continue;
      const retry = this.retries.get(entry.token);
      if (!opts.force && retry && retry.nextAt > this.now()) continue;
      await this.closeOne(entry.token, opts.signal, opts.timeoutMs);
    }
    return ledger.count(environment);
  }

  /** Closes specific tokens now (learned late, after their run ended). */
  async closeTokens(tokens: string[], signal?: AbortSignal): Promise<void> {
    for (const token of tokens) {
      if (signal?.aborted || !this.opts.ledger.has(this.opts.environment, token)) continue;
      await this.closeOne(token, signal);
    }
  }

  /** Takes over orphans; reports their intents (shared by every environment of the ledger). */
  private async adopt(full: boolean): Promise<void> {
    try {
      const { sessions, intents } = await this.opts.ledger.adoptOrphans({ full });
      // Each environment's own count under its own name: adopted entries may be any
      // environment's, one no longer configured included (sessions/removed.ts closes those).
      const counts = new Map<string, number>();
      for (const { environment } of sessions)
        counts.set(environment, (counts.get(environment) ?? 0) + 1);
      for (const [environment, count] of counts) {
        this.opts.log.warn(
          { environment, sessions: count },
          'closing synthetic sessions left open by a previous run',
        );
      }
      for (const intent of intents) this.opts.onUnrecoverable?.(intent);
    } catch (err) {
      // The ledger has reported it once already (onWritableChange), and it fails at every run
      // while the state directory is unwritable: one line per change, not one per run
      // (docs/configuration.md, "The session ledger").
      const reported = !this.opts.ledger.writable;
      this.opts.log[reported ? 'debug' : 'warn'](
        { err },
        'could not read the session ledger for leftover sessions',
      );
    }
  }

  private async closeOne(token: string, signal?: AbortSignal, timeoutMs?: number): Promise<void> {
    const { client, ledger, environment, budget, gate, log } = this.opts;
    try {
      await admit(gate, budget, { maxWaitMs: 0, ...(signal ? { signal } : {}) });
      const response = await closeSession(client, token, {
        timeoutMs: timeoutMs ?? this.opts.timeoutMs,
        ...(signal ? { signal } : {}),
      });
      gate.observe(response.statusCode, response.retryAfterMs);
      if (confirmsClose(response)) {
        await ledger.remove(environment, token);
        this.retries.delete(token);
        log.info({ statusCode: response.statusCode }, 'closed a leftover synthetic session');
        return;
      }
      this.backoff(token, response.transportError?.reason ?? `HTTP ${response.statusCode}`);
    } catch (err) {
      if (signal?.aborted || err instanceof RetryAfterError) return;
      this.backoff(token, 'error');
      log.warn({ err }, 'closing a leftover synthetic session failed');
    }
  }

  private backoff(token: string, detail: string): void {
    const attempts = (this.retries.get(token)?.attempts ?? 0) + 1;
    const waitMs = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (attempts - 1));
    this.retries.set(token, { attempts, nextAt: this.now() + waitMs });
    this.opts.log.warn(
      { attempts, retryInMs: waitMs, detail },
      'could not close a synthetic session; will retry',
    );
  }
}
