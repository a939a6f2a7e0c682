import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../api/client.js';
import { analyticsCheck, type AnalyticsFacts } from './index.js';
import type { CheckResult } from '../../kernel/check.js';
import { lifecycleCheck } from '../lifecycle/index.js';
import { BackoffGate } from '../../limits/backoff-gate.js';
import { RequestBudget } from '../../limits/request-budget.js';
import { runCheck } from '../../runner.js';
import { SessionJournal } from '../../sessions/journal.js';
import {
  API_KEY,
  captureLogger,
  startTestSimulator,
  testEnvironment,
  testRuntime,
  type EnvironmentOverrides,
} from '../../../test/support/harness.js';
import { useTestSimulator } from '../../../test/support/simulator-hooks.js';
import { createSession } from '../../api/sessions.js';
import { ping } from '../ping/request.js';
import { CHECK_LIST } from '../index.js';
import { formatProblems, parseConfigText } from '../../config/index.js';
import { problems } from '../../../test/config/helpers.js';
import { fixtures } from './fixtures.js';

const KEYS = { ISA_PRODUCTION_API_KEY: 'prod-key' };

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const INGEST_DELAY_MS = 45 * SECOND;

/** One clock for the simulator and the check: lags and ages are exact. */
let t = Date.now();
const clock = () => t;

const sim = useTestSimulator({
  now: clock,
  analyticsIngestDelayMs: INGEST_DELAY_MS,
  // The frozen clock would keep every request in one window; the limit has its own test.
  rateLimit: { perSecond: 100_000, analyticsPerMinute: 100_000 },
});

type Analytics = NonNullable<EnvironmentOverrides['analytics']>;

/** An environment's view over several runs: its journal and what the check keeps between runs. */
function monitor(url: string, analytics: Analytics = {}) {
  const env = testEnvironment(url, { analytics: { enabled: true, ...analytics } });
  const journal = new SessionJournal(100, clock);
  const retained = new Map<string, object>();
  const client = new ApiClient({ baseUrl: env.baseUrl, apiKey: env.apiKey, userAgent: 'test' });
  const { log, lines } = captureLogger();
  return {
    journal,
    lines,
    client,
    async run(): Promise<CheckResult<AnalyticsFacts>> {
      return (await runCheck({
        check: analyticsCheck,
        environment: env,
        client,
        budget: new RequestBudget(1000),
        gate: new BackoffGate(),
        // The analytics check creates no session.
        sessions: {
          create: () => Promise.reject(new Error('analytics creates no session')),
          opened: () => Promise.resolve(),
          closed: () => Promise.resolve(),
          release: () => {},
        },
        createdSessions: journal,
        retained,
        log,
        runNumber: 0,
        timeoutMs: 5_000,
        now: clock,
      })) as CheckResult<AnalyticsFacts>;
    },
    /** Creates a synthetic session as the lifecycle check would, and journals it. */
    async createSession(campaignId: string | null = 'isa-monitor-test'): Promise<string> {
      const response = await createSession(
        client,
        {
          street1: '1 Instant Way',
          zip: '80202',
          ...(campaignId === null ? {} : { campaign_id: campaignId }),
        },
        { timeoutMs: 2_000 },
      );
      const token = response.headers['session_token'];
      if (!token) throw new Error(`no session created: HTTP ${response.statusCode}`);
      journal.add(token, campaignId);
      return token;
    },
  };
}

const syncRequests = () => sim.requests.filter((r) => r.path.startsWith('/analytics/sessions?'));

describe('analytics check: incremental sync', () => {
  it('reads every page since the last successful sync, then only what changed after it', async () => {
    const m = monitor(sim.url, { initialWindowMs: 90 * 24 * 60 * MINUTE });
    const before = syncRequests().length;
    const first = await m.run();
    expect(first).toMatchObject({ outcome: 'pass', reason: null });
    // The seeded history: about 130 sessions, 50 a page.
    expect(first.facts?.pages).toBe(3);
    expect(first.facts?.rows).toBeGreaterThan(100);
    expect(first.facts?.rows).toBeLessThanOrEqual(150);
    expect(first.facts?.syncSucceeded).toBe(true);
    expect(first.steps.map((s) => s.name)).toEqual(['sync', 'sync', 'sync']);
    const firstPages = syncRequests().slice(before);
    expect(firstPages.map((r) => new URL(r.path, sim.url).searchParams.get('page'))).toEqual([
      '1',
      '2',
      '3',
    ]);
    const since = new Set(
      firstPages.map((r) => new URL(r.path, sim.url).searchParams.get('updated_since')),
    );
    expect(since.size).toBe(1);

    // The next sync starts at the first page's responded_at, which is the simulator's now.
    const respondedAt = new Date(t).toISOString();
    t += MINUTE;
    await m.createSession();
    t += INGEST_DELAY_MS;
    const second = await m.run();
    expect(second.outcome).toBe('pass');
    const secondPage = syncRequests().at(-1);
    expect(new URL(secondPage?.path ?? '', sim.url).searchParams.get('updated_since')).toBe(
      respondedAt,
    );
    // Only the new session changed since: one row, one page.
    expect(second.facts).toMatchObject({ pages: 1, rows: 1 });
  });

  it('fails as sync_incomplete beyond max_pages and repeats the sync from the same point', async () => {
    const m = monitor(sim.url, { initialWindowMs: 90 * 24 * 60 * MINUTE, maxPages: 2 });
    const first = await m.run();
    expect(first).toMatchObject({ outcome: 'fail', reason: 'sync_incomplete' });
    expect(first.facts).toMatchObject({ pages: 2, syncSucceeded: false });
    const sinceOf = (r: { path: string } | undefined) =>
      new URL(r?.path ?? '', sim.url).searchParams.get('updated_since');
    const lastOfFirst = syncRequests().at(-1);
    t += MINUTE;
    await m.run();
    expect(sinceOf(syncRequests().at(-1))).toBe(sinceOf(lastOfFirst));
  });

  it('fails as forbidden on a 403 and still looks up the awaited sessions', async () => {
    const m = monitor(sim.url);
    await m.createSession();
    t += INGEST_DELAY_MS;
    sim.simulator.faults.add({
      endpoint: 'analytics',
      count: 1,
      fault: { kind: 'status', status: 403 },
    });
    const result = await m.run();
    expect(result).toMatchObject({ outcome: 'fail', reason: 'forbidden' });
    expect(result.steps.map((s) => [s.name, s.statusCode])).toEqual([
      ['sync', 403],
      ['lookup', 200],
    ]);
    expect(result.facts?.ingestLagsMs).toEqual([INGEST_DELAY_MS]);
  });

  it('stops at the API analytics limit (429) and makes no further request', async () => {
    const limited = await startTestSimulator({
      now: clock,
      rateLimit: { perSecond: 100_000, analyticsPerMinute: 2 },
    });
    try {
      const m = monitor(limited.url, { initialWindowMs: 90 * 24 * 60 * MINUTE });
      await m.createSession();
      const result = await m.run();
      expect(result).toMatchObject({ outcome: 'fail', reason: 'rate_limited' });
      expect(result.steps.map((s) => [s.name, s.statusCode])).toEqual([
        ['sync', 200],
        ['sync', 200],
        ['sync', 429],
      ]);
      expect(result.facts?.awaiting).toBe(1);
    } finally {
      await limited.close();
    }
  });
});

describe('analytics check: ingest lag of synthetic sessions', () => {
  it('looks a session up until it appears and measures creation to first appearance', async () => {
    const m = monitor(sim.url);
    const token = await m.createSession();
    t += 30 * SECOND;
    const early = await m.run();
    expect(early).toMatchObject({ outcome: 'pass' });
    expect(early.facts).toMatchObject({ ingestLagsMs: [], awaiting: 1, oldestAwaitingMs: 30_000 });
    expect(early.steps.at(-1)).toMatchObject({
      name: 'lookup',
      statusCode: 404,
      path: '/analytics/sessions/{token}',
    });

    t += 20 * SECOND;
    const found = await m.run();
    expect(found.outcome).toBe('pass');
    expect(found.facts).toMatchObject({ ingestLagsMs: [50_000], awaiting: 0, late: 0 });
    expect(found.contractChecks).toContainEqual({ check: 'analytics_campaign_id', result: 'pass' });

    // Found once, never looked up again.
    t += MINUTE;
    const after = await m.run();
    expect(after.steps.some((s) => s.name === 'lookup')).toBe(false);

    // The token stays out of steps, facts and log lines.
    const seen = JSON.stringify([early, found, after, m.lines]);
    expect(seen).not.toContain(token);
    expect(seen).not.toContain(API_KEY);
  });

  it('passes each session with the campaign it was created with, none included', async () => {
    const m = monitor(sim.url);
    await m.createSession('acme-synthetic');
    await m.createSession(null);
    t += INGEST_DELAY_MS;
    const result = await m.run();
    expect(result).toMatchObject({ outcome: 'pass', reason: null });
    expect(result.contractChecks.filter((c) => c.check === 'analytics_campaign_id')).toEqual([
      { check: 'analytics_campaign_id', result: 'pass' },
      { check: 'analytics_campaign_id', result: 'pass' },
    ]);
  });

  it('fails when analytics reports another campaign than the session was created with', async () => {
    const m = monitor(sim.url);
    await m.createSession('acme-synthetic');
    t += INGEST_DELAY_MS;
    sim.simulator.faults.add({
      endpoint: 'analytics',
      fault: { kind: 'analytics_campaign', campaignId: 'somebody-else' },
    });
    const result = await m.run();
    expect(result).toMatchObject({ outcome: 'fail', reason: 'campaign_mismatch' });
    expect(result.contractChecks).toContainEqual({
      check: 'analytics_campaign_id',
      result: 'fail',
      detail: 'campaign_id differs from the one the session was created with',
    });
  });

  it('counts a session late past the bound and missing past the timeout while ingestion stalls', async () => {
    const m = monitor(sim.url, { ingestLagBoundMs: 5 * MINUTE, ingestTimeoutMs: 15 * MINUTE });
    sim.simulator.faults.add({ fault: { kind: 'ingest_stall' } });
    await ping(m.client, { timeoutMs: 2_000 });
    t += 1;
    await m.createSession();

    t += 4 * MINUTE;
    expect((await m.run()).facts).toMatchObject({ late: 0, missing: 0, awaiting: 1 });
    t += 2 * MINUTE;
    const late = await m.run();
    expect(late).toMatchObject({ outcome: 'pass' });
    expect(late.facts).toMatchObject({ late: 1, missing: 0, awaiting: 1 });
    t += 5 * MINUTE;
    // Late is counted once per session.
    expect((await m.run()).facts).toMatchObject({ late: 0, missing: 0, awaiting: 1 });
    t += 5 * MINUTE;
    const missing = await m.run();
    expect(missing).toMatchObject({ outcome: 'fail', reason: 'sessions_missing' });
    expect(missing.facts).toMatchObject({ late: 0, missing: 1, awaiting: 0 });
  });

  it('counts a session that appears after the bound as late, with its full lag', async () => {
    const m = monitor(sim.url, { ingestLagBoundMs: 30 * SECOND });
    sim.simulator.faults.add({ fault: { kind: 'ingest_stall' } });
    await ping(m.client, { timeoutMs: 2_000 });
    t += 1;
    await m.createSession();
    t += 2 * MINUTE;
    sim.simulator.faults.clear();
    const result = await m.run();
    expect(result.outcome).toBe('pass');
    expect(result.facts).toMatchObject({ ingestLagsMs: [2 * MINUTE], late: 1, awaiting: 0 });
  });
});

describe('analytics check in an environment runtime', () => {
  /** One lifecycle run with `campaignId`, then analytics until the session is found. */
  async function followOneSession(campaignId: string): Promise<CheckResult<AnalyticsFacts>> {
    const env = testEnvironment(sim.url, {
      lifecycle: {
        campaignId,
        addresses: [{ street1: '1 Instant Way', zip: '80203', expect: 'available' }],
      },
      analytics: { enabled: true },
    });
    const { runtime } = await testRuntime(env);
    try {
      expect((await runtime.run(lifecycleCheck)).outcome).toBe('pass');
      t += INGEST_DELAY_MS;
      return (await runtime.run(analyticsCheck)) as CheckResult<AnalyticsFacts>;
    } finally {
      await runtime.close();
    }
  }
  const campaignChecks = (result: CheckResult, outcome: string) =>
    result.contractChecks.filter((c) => c.check === 'analytics_campaign_id' && c.result === outcome)
      .length;

  it('passes a healthy API whatever campaign_id the lifecycle tags its sessions with', async () => {
    for (const campaignId of ['acme-synthetic', 'isa-monitor-synthetic']) {
      const found = await followOneSession(campaignId);
      expect(found.facts?.ingestLagsMs, campaignId).toHaveLength(1);
      expect(found.outcome, campaignId).toBe('pass');
      expect(campaignChecks(found, 'pass'), campaignId).toBe(1);
      expect(campaignChecks(found, 'fail'), campaignId).toBe(0);
    }
  });

  it('fails when the API reports another campaign for a lifecycle session', async () => {
    sim.simulator.faults.add({
      endpoint: 'analytics',
      fault: { kind: 'analytics_campaign', campaignId: 'isa-monitor-synthetic' },
    });
    const found = await followOneSession('acme-synthetic');
    expect(found).toMatchObject({ outcome: 'fail', reason: 'campaign_mismatch' });
    expect(campaignChecks(found, 'fail')).toBe(1);
  });

  it('follows the sessions the lifecycle check created, through the journal', async () => {
    const env = testEnvironment(sim.url, {
      lifecycle: { addresses: [{ street1: '1 Instant Way', zip: '80203', expect: 'available' }] },
      analytics: { enabled: true },
    });
    const { runtime } = await testRuntime(env);
    try {
      expect((await runtime.run(lifecycleCheck)).outcome).toBe('pass');
      expect(runtime.createdSessions.since(0)).toHaveLength(1);
      const waiting = (await runtime.run(analyticsCheck)) as CheckResult<AnalyticsFacts>;
      expect(waiting.facts).toMatchObject({ awaiting: 1, ingestLagsMs: [] });
      t += INGEST_DELAY_MS;
      const found = (await runtime.run(analyticsCheck)) as CheckResult<AnalyticsFacts>;
      expect(found.facts?.awaiting).toBe(0);
      expect(found.facts?.ingestLagsMs).toHaveLength(1);
      expect(found.contractChecks).toContainEqual({
        check: 'analytics_campaign_id',
        result: 'pass',
      });
    } finally {
      await runtime.close();
    }
  });
});

describe('analytics config', () => {
  const parse = (section: Record<string, unknown>) =>
    analyticsCheck.config.schema.safeParse({ enabled: true, ...section });

  it('is off unless configured, with defaults that fit the API analytics limit', () => {
    const parsed = analyticsCheck.config.schema.parse({});
    expect(
      analyticsCheck.config.toConfig(parsed, { baseUrl: 'https://api.example' }),
    ).toMatchObject({
      enabled: false,
      intervalMs: MINUTE,
      maxPages: 10,
      maxLookups: 5,
    });
    expect(
      analyticsCheck.config.toConfig(parsed, { baseUrl: 'https://api.example' }),
    ).not.toHaveProperty('campaignId');
  });

  it('refuses pages and lookups that could exceed 60 analytics requests a minute', () => {
    expect(parse({ interval: '1m', max_pages: 25, max_lookups: 5 }).success).toBe(true);
    const tooMany = parse({ interval: '1m', max_pages: 26, max_lookups: 5 });
    expect(tooMany.success).toBe(false);
    expect(JSON.stringify(tooMany.error?.issues)).toContain('allows 62 analytics requests');
    // At 20 s, up to four runs share a minute.
    expect(parse({ interval: '20s', timeout: '15s', max_pages: 10, max_lookups: 6 }).success).toBe(
      false,
    );
  });

  it('wants the lag bound below the ingest timeout', () => {
    expect(parse({ ingest_lag_bound: '30m', ingest_timeout: '10m' }).success).toBe(false);
  });

  it('loads campaign_id with a warning and ignores it: sessions carry their own campaign', () => {
    const result = parseConfigText(
      `
environments:
  - name: production
    base_url: https://a.invalid
    lifecycle: { campaign_id: acme-synthetic, addresses: [{ street1: "1 Main St", zip: "80202" }] }
    analytics: { enabled: true, campaign_id: isa-monitor-synthetic }
`,
      { checks: CHECK_LIST, env: KEYS },
    );
    if (!result.ok) throw new Error(formatProblems(result.problems));
    expect(result.config.environments[0]?.analytics).toEqual({
      ...fixtures.config.defaults,
      enabled: true,
    });
    expect(result.warnings).toEqual([
      {
        path: 'environments[0].analytics.campaign_id',
        message:
          'deprecated and ignored: each session is compared with the campaign_id it was created with (lifecycle.campaign_id); remove this key',
      },
    ]);
  });

  it('still refuses a campaign_id value the key never accepted', () => {
    expect(
      problems(
        parseConfigText(
          'environments:\n  - { name: production, base_url: "https://a.invalid", lifecycle: { enabled: false }, analytics: { campaign_id: "" } }\n',
          { checks: CHECK_LIST, env: KEYS },
        ),
      ),
    ).toEqual(['environments[0].analytics.campaign_id: must not be empty']);
  });
});
