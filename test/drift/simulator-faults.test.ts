/**
 * Each drift fault of the simulator, injected through its admin API, against the real simulator
 * over HTTP, and what the drift model makes of the answers: the severity docs/drift.md gives each
 * change, in the environment the fault was scoped to and nowhere else.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DriftBook } from '../../src/drift/book.js';
import { readDriftState } from '../../src/drift/store.js';
import { LEARNING } from '../../src/drift/tracker.js';
import { DEMO_TIMELINE, type Fault } from '../../src/simulator/index.js';
import { rawRequest, startTestSimulator, testClock, type TestClock } from '../simulator/helpers.js';
import {
  countsOf,
  driftClient,
  KEY,
  scratchBook,
  writeErrors,
  type DriftClient,
} from './simulated.js';

const START = Date.parse('2026-11-28T00:00:00Z');
const STEP_MS = 3 * 60_000;
const ADDRESS = { street1: '123 Main St', zip: '80202' };

type Op = 'ping' | 'get_session' | 'poll_services' | 'service_providers' | 'coverage';

let clock: TestClock;
let url: string;
let book: DriftBook;
let bookPath: string;
const clients: DriftClient[] = [];
const tokens = new Map<string, string>();

beforeEach(async (context) => {
  clock = testClock(START);
  const demo = context.task.name.includes('demo timeline');
  const sim = await startTestSimulator({
    apiKeys: [KEY],
    now: clock.now,
    qualifyDelayMs: 1000,
    ...(demo ? { timeline: DEMO_TIMELINE } : {}),
  });
  url = sim.url;
  ({ book, path: bookPath } = await scratchBook(clock.now));
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  tokens.clear();
  await book.close();
  expect(writeErrors.splice(0)).toEqual([]);
});

function clientOf(environment: string): DriftClient {
  const client = driftClient(url, environment, book);
  clients.push(client);
  return client;
}

/** One request of `op` in the environment of `client`; a session is made for the session reads. */
async function call(client: DriftClient, environment: string, op: Op, extra = {}) {
  if (op === 'ping') return client.send('ping', 'GET', '/ping', extra);
  if (op === 'service_providers')
    return client.send('service_providers', 'GET', '/service_providers', extra);
  if (op === 'coverage') return client.send('coverage', 'GET', '/coverage?states[]=CO', extra);
  const token = await tokenOf(client, environment);
  if (op === 'get_session') return client.send('get_session', 'GET', `/sessions/${token}`, extra);
  return client.send('poll_services', 'GET', `/sessions/${token}/services/internet`, extra);
}

async function tokenOf(client: DriftClient, environment: string): Promise<string> {
  const known = tokens.get(environment);
  if (known !== undefined) return known;
  const created = await client.send('create_session', 'POST', '/sessions', {}, ADDRESS);
  const token = (created.body as { meta: { session_token: string } }).meta.session_token;
  tokens.set(environment, token);
  return token;
}

/** Answers `op` until its baseline settled: enough responses, over more than the hour. */
async function learn(client: DriftClient, environment: string, op: Op): Promise<void> {
  const rounds = Math.max(LEARNING.responses, Math.ceil(LEARNING.ms / STEP_MS)) + 1;
  for (let i = 0; i < rounds; i += 1) {
    await call(client, environment, op);
    clock.advance(STEP_MS);
  }
}

async function admin(path: string, body: unknown) {
  const res = await rawRequest(`${url}/__sim/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, res.text).toBeLessThan(300);
}

async function addRule(rule: {
  environment?: string;
  endpoint?: string;
  count?: number;
  fault: Fault;
}) {
  const res = await rawRequest(`${url}/__sim/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });
  expect(res.status, res.text).toBe(201);
}

/** The keys (`kind path`) of the open differences of an environment's operation, from the file. */
async function differencesOf(environment: string, op: string): Promise<string[]> {
  await book.sync(true);
  const { state } = await readDriftState(bookPath);
  return Object.keys(state[environment]?.[op]?.differences ?? {}).sort();
}

const KINDS: {
  name: string;
  op: Op;
  fault: Fault;
  shows: (body: Record<string, unknown>, text: string) => unknown;
  severity: 'breaking' | 'warning' | 'info';
  difference: string;
}[] = [
  {
    name: 'a field added is info',
    op: 'ping',
    fault: { kind: 'drift', change: 'add_field' },
    shows: (body) => body['migration_notice'],
    severity: 'info',
    difference: 'new_field migration_notice',
  },
  {
    name: 'an optional field dropped is a warning',
    op: 'get_session',
    fault: { kind: 'drift', change: 'drop_field', path: 'qualify_status' },
    shows: (body) => !('qualify_status' in body),
    severity: 'warning',
    difference: 'field_gone qualify_status',
  },
  {
    name: 'a qualify_status the spec does not have is a warning',
    op: 'poll_services',
    fault: { kind: 'drift', change: 'new_value', path: 'qualify_status', value: 'queued' },
    shows: (body) => body['qualify_status'] === 'queued',
    severity: 'warning',
    difference: 'new_value qualify_status',
  },
  {
    name: 'a provider type the spec does not have is a warning',
    op: 'service_providers',
    fault: { kind: 'drift', change: 'new_value', path: 'providers[].type', value: 'reseller' },
    shows: (body) => (body['providers'] as { type: string }[]).every((p) => p.type === 'reseller'),
    severity: 'warning',
    difference: 'new_value providers[].type',
  },
  {
    name: 'null where there never was one is a warning',
    op: 'coverage',
    fault: { kind: 'drift', change: 'null_field', path: 'meta.provider_count' },
    shows: (body) => (body['meta'] as Record<string, unknown>)['provider_count'] === null,
    severity: 'warning',
    difference: 'became_null meta.provider_count',
  },
  {
    name: 'another type is a warning',
    op: 'coverage',
    fault: { kind: 'drift', change: 'change_type', path: 'meta.service_data_set' },
    shows: (body) => typeof (body['meta'] as Record<string, unknown>)['service_data_set'],
    severity: 'warning',
    difference: 'type_changed meta.service_data_set',
  },
  {
    name: 'a response ten times its size is a warning',
    op: 'service_providers',
    fault: { kind: 'drift', change: 'grow' },
    shows: (body) => (body['providers'] as unknown[]).length,
    severity: 'warning',
    difference: 'size_out_of_range (size)',
  },
  {
    name: 'a required field gone is breaking',
    op: 'get_session',
    fault: { kind: 'drift', change: 'drop_field', path: 'meta.service_data_set' },
    shows: (body) => !('service_data_set' in (body['meta'] as Record<string, unknown>)),
    severity: 'breaking',
    difference: 'contract_violation meta.service_data_set',
  },
];

describe('drift faults against the drift model', () => {
  it.each(KINDS)('$name', async ({ op, fault, shows, severity, difference }) => {
    const client = clientOf('production');
    await learn(client, 'production', op);
    const before = await call(client, 'production', op);
    expect(countsOf(book, 'production', op)).toEqual({ breaking: 0, warning: 0, info: 0 });

    await addRule({ environment: 'production', fault });
    const after = await call(client, 'production', op);
    expect(after.status).toBe(before.status);
    const body = after.body as Record<string, unknown>;
    expect(shows(body, after.text)).not.toEqual(
      shows(before.body as Record<string, unknown>, before.text),
    );
    expect(shows(body, after.text)).toBeTruthy();

    const counts = { breaking: 0, warning: 0, info: 0, [severity]: 1 };
    expect(countsOf(book, 'production', op)).toEqual(counts);
    expect(await differencesOf('production', op)).toEqual([difference]);
  });

  it('a change in one environment only drifts that environment', async () => {
    const sandbox = clientOf('sandbox');
    const production = clientOf('production');
    await learn(sandbox, 'sandbox', 'poll_services');
    await learn(production, 'production', 'poll_services');
    await addRule({
      environment: 'sandbox',
      endpoint: 'poll_services',
      fault: { kind: 'drift', change: 'new_value', path: 'qualify_status', value: 'queued' },
    });

    const inSandbox = await call(sandbox, 'sandbox', 'poll_services');
    const inProduction = await call(production, 'production', 'poll_services');
    expect((inSandbox.body as { qualify_status: string }).qualify_status).toBe('queued');
    expect((inProduction.body as { qualify_status: string }).qualify_status).toBe('available');
    expectSandboxAloneWarned();
  });
});

/** One warning on the sandbox's polls, none on production's. */
function expectSandboxAloneWarned(): void {
  expect(countsOf(book, 'sandbox', 'poll_services')).toEqual({ breaking: 0, warning: 1, info: 0 });
  expect(countsOf(book, 'production', 'poll_services')).toEqual({
    breaking: 0,
    warning: 0,
    info: 0,
  });
}

describe('the demo timeline', () => {
  it('the demo timeline drifts the sandbox alone, at minute 24', async () => {
    const sandbox = clientOf('sandbox');
    const production = clientOf('production');
    await admin('timeline', { enabled: false });
    await learn(sandbox, 'sandbox', 'poll_services');
    await learn(production, 'production', 'poll_services');
    const loop = 30 * 60_000;
    clock.advance(loop - ((clock.now() - START) % loop) + 24 * 60_000 + 10_000);
    await admin('timeline', { enabled: true });

    const polls = [];
    for (let i = 0; i < 3; i += 1) {
      polls.push(await call(sandbox, 'sandbox', 'poll_services'));
      polls.push(await call(production, 'production', 'poll_services'));
    }
    const statuses = polls.map((poll) => (poll.body as { qualify_status: string }).qualify_status);
    // Sandbox and production in turn: two sandbox polls drift, then the count is used up.
    // Production's own answer may be any the spec allows; it is never the drifted one.
    expect(statuses.filter((_, i) => i % 2 === 0)).toEqual(['queued', 'queued', 'available']);
    expect(statuses.filter((_, i) => i % 2 === 1)).not.toContain('queued');
    expectSandboxAloneWarned();
  });
});

describe('drift faults in the simulator', () => {
  it('applies several faults to one answer, and one per request from the header', async () => {
    const client = clientOf('sandbox');
    const faults: Fault[] = [
      { kind: 'drift', change: 'add_field', path: 'meta', field: 'api_version', value: 2 },
      { kind: 'drift', change: 'new_value', path: 'meta.session_status', value: 'archived' },
    ];
    const res = await call(client, 'sandbox', 'get_session', {
      'x-isa-sim-fault': JSON.stringify(faults),
    });
    const meta = (res.body as { meta: Record<string, unknown> }).meta;
    expect(meta['api_version']).toBe(2);
    expect(meta['session_status']).toBe('archived');
    const plain = await call(client, 'sandbox', 'get_session');
    expect((plain.body as { meta: Record<string, unknown> }).meta['session_status']).toBe('open');
  });

  it('a counted rule is used up only by an answer it changes', async () => {
    const client = clientOf('sandbox');
    const created = await call(client, 'sandbox', 'get_session');
    await addRule({
      count: 1,
      fault: { kind: 'drift', change: 'null_field', path: 'qualify_status' },
    });
    // Ping has no qualify_status: the rule stays.
    const ping = await call(client, 'sandbox', 'ping');
    expect(ping.body).toMatchObject({ message: 'pong' });
    const first = await call(client, 'sandbox', 'get_session');
    const second = await call(client, 'sandbox', 'get_session');
    const status = (answer: typeof ping) =>
      (answer.body as { qualify_status: unknown }).qualify_status;
    expect(status(first)).toBeNull();
    expect(status(second)).toBe(status(created));
    expect(status(second)).toEqual(expect.any(String));
  });

  it('grows a list by the factor given, keeping its items', async () => {
    const client = clientOf('sandbox');
    const plain = await call(client, 'sandbox', 'service_providers');
    await addRule({ fault: { kind: 'drift', change: 'grow', factor: 3 } });
    const grown = await call(client, 'sandbox', 'service_providers');
    const items = (plain.body as { providers: unknown[] }).providers;
    expect((grown.body as { providers: unknown[] }).providers).toEqual([
      ...items,
      ...items,
      ...items,
    ]);
  });

  it.each([
    [
      { kind: 'drift', change: 'new_value', path: 'qualify_status' },
      'new_value needs a string value',
    ],
    [{ kind: 'drift', change: 'null_field' }, 'null_field needs a path'],
    [{ kind: 'drift', change: 'drop_field', path: 'a..b' }, 'must be a path such as'],
    [{ kind: 'drift', change: 'grow', field: 'x' }, 'only add_field takes a field'],
  ])('refuses %j: %s', async (fault, message) => {
    const res = await rawRequest(`${url}/__sim/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fault }),
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain(message);
  });
});
