/**
 * One `runCheck` for the runner's tests: a client for `baseUrl`, a fresh budget, gate and journal,
 * and the test's overrides. The result is a promise the caller awaits (also on a fake clock, after
 * advancing it); the client is closed when the run ends.
 */
import { ApiClient } from '../../src/api/client.js';
import type { AnyCheck } from '../../src/kernel/check.js';
import { BackoffGate } from '../../src/limits/backoff-gate.js';
import { RequestBudget } from '../../src/limits/request-budget.js';
import { runCheck, type RunOptions } from '../../src/runner.js';
import { SessionJournal } from '../../src/sessions/journal.js';
import { captureLogger, testEnvironment } from './harness.js';

/** A session tracker for runs that must create none. */
const NO_SESSIONS: RunOptions['sessions'] = {
  create: () => Promise.reject(new Error('the runner tests create no session')),
  opened: () => Promise.resolve(),
  closed: () => Promise.resolve(),
  release: () => {},
};

export function startRun(baseUrl: string, check: AnyCheck, overrides: Partial<RunOptions> = {}) {
  const environment = testEnvironment(baseUrl);
  const client = new ApiClient({ baseUrl, apiKey: environment.apiKey, userAgent: 't' });
  const { log, lines } = captureLogger();
  const result = runCheck({
    check,
    environment,
    client,
    budget: new RequestBudget(50),
    gate: new BackoffGate(),
    sessions: NO_SESSIONS,
    createdSessions: new SessionJournal(),
    retained: new Map(),
    log,
    runNumber: 0,
    timeoutMs: 5_000,
    ...overrides,
  }).finally(() => client.close());
  return { result, lines };
}
