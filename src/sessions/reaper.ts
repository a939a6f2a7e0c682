/**
 * Closes synthetic sessions the ledger still lists: at start-up (what a crash left behind) and
 * after runs whose own cleanup could not close. Each token is retried with exponential backoff,
 * and every attempt respects the environment's request budget and Retry-After gate.
 */
import type { ApiClient } from '../api/client.js';
import type { CheckLogger } from '../checks/check.js';
import type { BackoffGate } from '../limits/backoff-gate.js';
import type { RequestBudget } from '../limits/request-budget.js';
import type { SessionLedger } from './ledger.js';

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
  now?: () => number;
}

export class SessionReaper {
  private readonly retries = new Map<string, { attempts: number; nextAt: number }>();
  private readonly now: () => number;

  constructor(private readonly opts: SessionReaperOptions) {
    this.now = opts.now ?? (() => performance.now());
  }

  /**
   * Tries to close every listed token whose backoff has elapsed (all of them with `force`).
   * Never throws; returns how many are still open.
   */
  async sweep(opts: { force?: boolean; signal?: AbortSignal } = {}): Promise<number> {
    const { ledger, environment } = this.opts;
    for (const entry of ledger.list(environment)) {
      if (opts.signal?.aborted) break;
      const retry = this.retries.get(entry.token);
      if (!opts.force && retry && retry.nextAt > this.now()) continue;
      await this.closeOne(entry.token, opts.signal);
    }
    return ledger.count(environment);
  }

  private async closeOne(token: string, signal?: AbortSignal): Promise<void> {
    const { client, ledger, environment, budget, gate, log } = this.opts;
    try {
      await gate.waitOpen(signal);
      await budget.acquire(signal);
      const response = await client.closeSession(token, { timeoutMs: this.opts.timeoutMs, signal });
      gate.observe(response.statusCode, response.retryAfterMs);
      // 200: closed now; 410: already closed; 400/404: the API does not know the token, so
      // nothing is left open on its side.
      if ([200, 400, 404, 410].includes(response.statusCode ?? 0)) {
        await ledger.remove(environment, token);
        this.retries.delete(token);
        log.info({ statusCode: response.statusCode }, 'closed a leftover synthetic session');
        return;
      }
      this.backoff(token, response.transportError?.reason ?? `HTTP ${response.statusCode}`);
    } catch (err) {
      if (signal?.aborted) return;
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
