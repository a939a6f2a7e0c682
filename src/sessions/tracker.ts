/**
 * One environment's session bookkeeping for the checks (`CheckContext.sessions`): how a session
 * is created so that every session that can be closed is closed, and every one that cannot is
 * reported.
 *
 * 1. Before the create is sent, an intent (time, correlation id, campaign, address) is on disk.
 *    If that write fails, nothing is sent: a monitor that cannot record a session does not create
 *    one.
 * 2. Every token in the answer, whatever its status, header or body (both when they differ), is
 *    written to the ledger and held away from the reaper while the run uses it.
 * 3. A create that misses its deadline is a timeout for the run, but its answer is read for
 *    `LATE_ANSWER_GRACE_MS` more; tokens in it are written and closed at once.
 * 4. An intent that ends without a token may be an open session nobody can close: no answer at
 *    all (connection reset, nothing within the grace), a success without a token, or a server
 *    error other than 503 (the one the spec uses for "address validation unavailable"). It is
 *    reported through `onUnrecoverable`. A 4xx or a 503 without a token says the API created
 *    nothing.
 */
import { randomUUID } from 'node:crypto';
import type { ApiClient, ApiResponse, RequestOptions } from '../api/client.js';
import type { CheckLogger, SessionTracker } from '../kernel/check.js';
import type { CreateIntent, SessionLedger } from './ledger.js';
import type { SessionReaper } from './reaper.js';
import { sessionTokensOf } from './tokens.js';
import { createSession } from '../api/sessions.js';

/**
 * How long a create's answer is still read after its deadline. Bounded so that shutdown (15 s)
 * can wait for it: the daemon's stop waits for late answers within its grace.
 */
export const LATE_ANSWER_GRACE_MS = 5_000;

export interface SessionTrackingOptions {
  environment: string;
  ledger: SessionLedger;
  client: ApiClient;
  reaper: SessionReaper;
  log: CheckLogger;
  onUnrecoverable: (intent: CreateIntent) => void;
  /**
   * Every token a create answer carried, with the `campaign_id` the create sent (null: none), for
   * the created-sessions journal.
   */
  onCreated?: (token: string, campaignId: string | null) => void;
  graceMs?: number;
}

export class SessionTracking implements SessionTracker {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly opts: SessionTrackingOptions) {}

  async create(
    body: Record<string, unknown>,
    options: RequestOptions,
    admit: () => Promise<void> = async () => {},
  ): Promise<{ response: ApiResponse; tokens: string[]; durable: boolean }> {
    const { ledger, environment } = this.opts;
    const { campaign_id: campaignId, ...address } = body;
    const intent: Omit<CreateIntent, 'owner'> = {
      id: randomUUID(),
      environment,
      createdAt: Date.now(),
      correlationId: options.correlationId ?? '',
      campaignId: typeof campaignId === 'string' ? campaignId : '',
      address: Object.fromEntries(Object.entries(address).map(([k, v]) => [k, String(v)])),
    };
    await ledger.addIntent(intent);
    // Admitted only now, right before sending: a token taken before the intent write would be
    // spent while the disk is busy, and the create would leave with the next request's token
    // already refilled, two requests closer together than the budget allows.
    try {
      await admit();
    } catch (err) {
      // Nothing was sent, so the intent stands for no session.
      await ledger.removeIntent(intent.id).catch((writeErr: unknown) => {
        this.opts.log.warn({ err: writeErr }, 'could not remove a create intent from the ledger');
      });
      throw err;
    }

    let onLate: (response: ApiResponse) => void = () => {};
    const late = new Promise<ApiResponse>((resolve) => (onLate = resolve));
    const response = await createSession(this.opts.client, body, {
      ...options,
      lateAnswer: { graceMs: this.opts.graceMs ?? LATE_ANSWER_GRACE_MS, onAnswer: onLate },
    });
    if (response.answerPending) {
      this.track(late.then((answer) => this.settleLate(intent, answer)));
      return { response, tokens: [], durable: true };
    }
    const tokens = sessionTokensOf(response);
    const durable = await this.record(intent, response, tokens);
    for (const token of tokens) this.opts.reaper.hold(token);
    return { response, tokens, durable };
  }

  opened(token: string, campaignId: string | null): Promise<void> {
    this.opts.onCreated?.(token, campaignId);
    return this.opts.ledger.add(this.opts.environment, token);
  }

  closed(token: string): Promise<void> {
    this.opts.reaper.release(token);
    return this.opts.ledger.remove(this.opts.environment, token);
  }

  release(token: string): void {
    this.opts.reaper.release(token);
  }

  /** Resolves once every late answer has been read and its tokens closed (or given up). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((err: unknown) =>
      this.opts.log.warn({ err }, 'handling a late create answer failed'),
    );
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  /**
   * Settles the intent, in one ledger write with the learned tokens: gone when an answer arrived (a
   * token was learned, or the API answered without creating one), reported when none did. Never throws;
   * false when a write failed (the tokens are still listed in memory, so the reaper closes them).
   */
  private async record(
    intent: Omit<CreateIntent, 'owner'>,
    response: ApiResponse,
    tokens: string[],
  ): Promise<boolean> {
    const { ledger, environment, log } = this.opts;
    // The intent holds '' for a create sent without campaign_id (the API's rule: 1-100 chars).
    const campaignId = intent.campaignId === '' ? null : intent.campaignId;
    for (const token of tokens) this.opts.onCreated?.(token, campaignId);
    if (tokens.length === 0 && mayHaveCreated(response.statusCode)) {
      this.opts.onUnrecoverable(intent);
    }
    try {
      await ledger.settleIntent(intent.id, environment, tokens);
      return true;
    } catch (err) {
      log.warn(
        { err, tokens: tokens.length },
        "could not write a create's outcome to the ledger; closing its sessions anyway",
      );
      return false;
    }
  }

  private async settleLate(intent: Omit<CreateIntent, 'owner'>, answer: ApiResponse) {
    const tokens = sessionTokensOf(answer);
    this.opts.log.warn(
      { statusCode: answer.statusCode, tokens: tokens.length },
      'a create answered after its deadline; closing what it created',
    );
    await this.record(intent, answer, tokens);
    await this.opts.reaper.closeTokens(tokens);
  }
}

/** Whether an answer without a token may still stand for a session the API created. */
function mayHaveCreated(statusCode: number | null): boolean {
  if (statusCode === null) return true;
  if (statusCode >= 200 && statusCode < 300) return true;
  return statusCode >= 500 && statusCode !== 503;
}
