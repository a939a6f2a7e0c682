/**
 * The drift model fed from the real simulator over HTTP: a DriftBook on a scratch file and a test
 * clock, and an API client whose every answer the book observes as the daemon's would, with its
 * status, headers, parsed body and size.
 */
import { Agent, request as httpRequest } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROVIDER_LISTS, responseSpecOf } from '../../src/checks/index.js';
import { DriftBook, type DriftCounts } from '../../src/drift/book.js';
import type { Operation } from '../../src/kernel/vocabulary.js';
import { withLock } from '../../src/sessions/lock.js';

export const KEY = 'drift-test-key';

/** One answer of the simulator. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: unknown;
}

/** The write failures of every scratch book: a test of the model expects none. */
export const writeErrors: unknown[] = [];

/**
 * A DriftBook on a scratch file, reading `now`; `onChange` hears every change of an operation's
 * open differences. `close` stops its sync timer.
 */
export async function scratchBook(
  now: () => number,
  onChange: (environment: string, operation: string, counts: DriftCounts) => void = () => undefined,
): Promise<{ book: DriftBook; path: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'drift-sim-'));
  const path = join(dir, 'contract-baselines.json');
  const { book } = await DriftBook.open({
    path,
    specOf: responseSpecOf,
    listsProviders: (operation) => PROVIDER_LISTS.has(operation),
    onChange,
    withLock: (fn) => withLock(`${path}.lock`, fn),
    // A sync started by an observation is not awaited: its failure would be unhandled if thrown.
    onWriteError: (err) => writeErrors.push(err),
    now: () => new Date(now()),
  });
  return { book, path };
}

/** The open differences of one environment's operation (or `error`), by severity. */
export function countsOf(book: DriftBook, environment: string, operation: string): DriftCounts {
  const found = book
    .counts()
    .find((entry) => entry.environment === environment && entry.operation === operation);
  return found?.counts ?? { breaking: 0, warning: 0, info: 0 };
}

/** Every open difference, over every environment and operation. */
export function totalOpen(book: DriftBook): number {
  return book
    .counts()
    .reduce((sum, { counts }) => sum + counts.breaking + counts.warning + counts.info, 0);
}

/**
 * An API client of one simulator environment (`/env/<name>`) that hands every answer to the
 * book under the operation the monitor's check would name it by, on one kept-alive connection.
 */
export function driftClient(
  baseUrl: string,
  environment: string,
  book: DriftBook | null,
  agent = new Agent({ keepAlive: true, maxSockets: 1 }),
) {
  const send = async (
    operation: Operation,
    method: string,
    path: string,
    extra: Record<string, string> = {},
    body?: unknown,
  ): Promise<Answer> => {
    const answer = await exchange(
      agent,
      `${baseUrl}/env/${environment}${path}`,
      method,
      extra,
      body,
    );
    book?.observe(environment, {
      operation,
      statusCode: answer.status,
      headers: answer.headers,
      body: answer.body,
      bodyBytes: Buffer.byteLength(answer.text),
    });
    return answer;
  };
  return { send, close: () => agent.destroy() };
}
export type DriftClient = ReturnType<typeof driftClient>;

function exchange(
  agent: Agent,
  url: string,
  method: string,
  extra: Record<string, string>,
  body: unknown,
): Promise<Answer> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${KEY}`,
    accept: 'application/json',
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...extra,
  };
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          headers: flatHeaders(res.headers),
          text,
          body: parseJson(text),
        });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

function flatHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
