/**
 * The cost of contract drift (docs/drift.md): the CPU of `DriftBook.observe` per response, by
 * operation, over real answers of the simulator, and the size on disk of a learned baseline.
 *
 * The simulator answers every operation the checks make, in two environments, over HTTP; the
 * answers are kept as the API client hands them over (status, headers, parsed body, size). A
 * DriftBook learns from them until every operation's baseline settled (docs/drift.md,
 * "Learning"), and its file is written. Then each answer is observed again ROUNDS times and
 * timed, which is the path of every response once the baseline has learned: its shape, then the
 * comparison with the baseline.
 *
 *   npx tsx bench/drift.ts [--rounds 200]
 */
import { mkdtemp, stat } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PROVIDER_LISTS, responseSpecOf } from '../src/checks/index.js';
import { DriftBook, ERROR_ENVELOPE, type DriftResponse } from '../src/drift/book.js';
import { readDriftState } from '../src/drift/store.js';
import { LEARNING } from '../src/drift/tracker.js';
import type { Operation } from '../src/kernel/vocabulary.js';
import { startSimulator } from '../src/simulator/index.js';
import { DRIFT_READS } from '../test/support/check-fixtures.js';
import { median } from './stats.js';

const KEY = 'bench-drift-key';
const ENVIRONMENTS = ['sandbox', 'production'];
const START = Date.parse('2026-11-02T00:00:00Z');
const RUNS = 24;
const ADDRESSES = [
  { street1: '2 Pending Ave', zip: '80202' },
  { street1: '1600 Larimer St', zip: '80202' },
  { street1: '3 No Service Rd', city: 'Denver', state: 'CO' },
  { street1: '5 Retry Ln', zip: '80202' },
  { street1: '1 Instant Way', zip: '80202' },
  { street1: '4 Failed Blvd', zip: '80202' },
];

interface Collected {
  environment: string;
  response: DriftResponse;
}

/** One request; the answer as the API client hands it to the drift book. */
function exchange(
  agent: Agent,
  url: string,
  operation: Operation,
  method: string,
  body?: unknown,
): Promise<DriftResponse> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${KEY}`,
    accept: 'application/json',
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
  };
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const flat = Object.fromEntries(
          Object.entries(res.headers).map(([name, value]) => [name, String(value)]),
        );
        resolve({
          operation,
          statusCode: res.statusCode ?? null,
          headers: flat,
          body: JSON.parse(text) as unknown,
          bodyBytes: Buffer.byteLength(text),
        });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

/** Every operation of the checks, RUNS times in each environment, on a clock moved by hand. */
async function collect(clock: { t: number }): Promise<Collected[]> {
  const sim = await startSimulator({ apiKeys: [KEY], now: () => clock.t, port: 0 });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const out: Collected[] = [];
  try {
    for (let run = 0; run < RUNS; run += 1) {
      for (const environment of ENVIRONMENTS) {
        const base = `${sim.url}/env/${environment}`;
        const send = async (operation: Operation, method: string, path: string, body?: unknown) => {
          const response = await exchange(agent, `${base}${path}`, operation, method, body);
          out.push({ environment, response });
          return response.body as { meta?: { session_token?: string } };
        };
        await oneRun(send, run, clock);
      }
      clock.t += (LEARNING.ms / RUNS) * 1.1;
    }
  } finally {
    agent.destroy();
    await sim.close();
  }
  return out;
}

type Send = (
  operation: Operation,
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ meta?: { session_token?: string } }>;

async function oneRun(send: Send, run: number, clock: { t: number }): Promise<void> {
  // The checks whose runs are stateless reads, as their fixtures give them.
  for (const read of DRIFT_READS.flatMap((check) => check.reads))
    await send(read.operation, 'GET', read.path);
  const created = await send('create_session', 'POST', '/sessions', ADDRESSES[run % 6]);
  const token = created.meta?.session_token ?? '';
  for (let poll = 0; poll < 3; poll += 1) {
    clock.t += 2_000;
    await send('poll_services', 'GET', `/sessions/${token}/services/internet`);
  }
  await send('get_session', 'GET', `/sessions/${token}`);
  await send('close_session', 'DELETE', `/sessions/${token}`);
  await send('verify_gone', 'GET', `/sessions/${token}`);
  await send('list_analytics_sessions', 'GET', '/analytics/sessions?page=1');
  await send('get_analytics_session', 'GET', `/analytics/sessions/${token}`);
}

async function openBook(path: string, clock: { t: number }): Promise<DriftBook> {
  const { book } = await DriftBook.open({
    path,
    specOf: responseSpecOf,
    listsProviders: (operation) => PROVIDER_LISTS.has(operation),
    // A new operation is reported with its zero counts at its first answer; anything else is a
    // difference, which healthy answers must not open.
    onChange: (environment, operation, counts) => {
      if (counts.breaking + counts.warning + counts.info === 0) return;
      throw new Error(`a difference in ${environment} ${operation}: ${JSON.stringify(counts)}`);
    },
    withLock: (fn) => fn(),
    onWriteError: (err) => {
      throw err;
    },
    now: () => new Date(clock.t),
  });
  return book;
}

/** The key an answer is kept under: its operation, or the error envelope. */
function keyOf({ response }: Collected): string {
  return (response.statusCode ?? 0) < 300 ? response.operation : ERROR_ENVELOPE;
}

/** Median and 99th percentile of observe's time per answer of each key, in microseconds. */
function timeObserve(book: DriftBook, answers: Collected[], rounds: number): void {
  const times = new Map<string, number[]>();
  for (let round = 0; round < rounds; round += 1) {
    for (const answer of answers) {
      const started = process.hrtime.bigint();
      book.observe(answer.environment, answer.response);
      const us = Number(process.hrtime.bigint() - started) / 1000;
      const key = keyOf(answer);
      const list = times.get(key) ?? [];
      list.push(us);
      times.set(key, list);
    }
  }
  console.log('\n| operation | answers | body bytes (median) | observe µs median | p99 |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const [key, us] of [...times].sort(([a], [b]) => a.localeCompare(b))) {
    const bytes = answers.filter((a) => keyOf(a) === key).map((a) => a.response.bodyBytes ?? 0);
    const p99 = [...us].sort((a, b) => a - b)[Math.floor(us.length * 0.99)] ?? 0;
    const row = [key, bytes.length, median(bytes), median(us).toFixed(1), p99.toFixed(1)];
    console.log(`| ${row.join(' | ')} |`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '200' } } });
  const rounds = Number(values.rounds);
  const clock = { t: START };
  const answers = await collect(clock);
  const path = join(await mkdtemp(join(tmpdir(), 'bench-drift-')), 'contract-baselines.json');
  const book = await openBook(path, clock);
  // Learning: every answer once, then once more past the hour so every baseline settles.
  for (const answer of answers) book.observe(answer.environment, answer.response);
  clock.t += LEARNING.ms;
  for (const answer of answers) book.observe(answer.environment, answer.response);
  await book.sync(true);
  const { state } = await readDriftState(path);
  const unsettled = Object.entries(state).flatMap(([environment, operations]) =>
    Object.entries(operations)
      .filter(([, drift]) => drift.learningSince !== null)
      .map(([key]) => `${environment} ${key}`),
  );
  if (unsettled.length > 0) throw new Error(`baselines still learning: ${unsettled.join(', ')}`);
  const bytes = (await stat(path)).size;
  console.log(`${answers.length} answers from the simulator, ${rounds} rounds timed`);
  console.log(`baseline file: ${bytes} bytes for ${ENVIRONMENTS.length} environments`);
  for (const environment of ENVIRONMENTS) {
    const operations = state[environment] ?? {};
    const size = Buffer.byteLength(JSON.stringify({ [environment]: operations }));
    console.log(`  ${environment}: ${Object.keys(operations).length} keys, ${size} bytes of JSON`);
  }
  timeObserve(book, answers, rounds);
  await book.close();
}

await main();
