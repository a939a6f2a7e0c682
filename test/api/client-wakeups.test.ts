/**
 * What a call leaves behind on the thread that made it: no timer that wakes the thread after the
 * answer (undici's shared half-second tick, armed by its connect, headers and body timeouts), and
 * a connect timeout of the measuring connector's own that still ends a connection that hangs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { createMeasuringAgent } from '../../src/api/timing.js';
import { ping } from '../../src/checks/ping/request.js';
import { source, timerTrace } from '../support/timer-trace.js';
import { API_KEY, USER_AGENT } from './helpers.js';

/**
 * Node's own timer trace (NODE_DEBUG=timer) of one ping over a new connection to a loopback
 * server, then 1.2 s of nothing; `dispatcher` is the source of an expression for the client's
 * dispatcher (`origin` in scope), or none for the client's own.
 */
function traceOfOnePing(dispatcher?: string): string {
  const src = (path: string) => source(path, import.meta.url);
  const script = `
import http from 'node:http';
import { ApiClient } from ${src('../../src/api/client.ts')};
import { UndiciPool } from ${src('../../src/api/timing.ts')};
import { ping } from ${src('../../src/checks/ping/request.ts')};
const server = http.createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ message: 'pong', timestamp: new Date().toISOString() }));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = 'http://127.0.0.1:' + server.address().port;
const client = new ApiClient({
  baseUrl: origin, apiKey: ${JSON.stringify(API_KEY)}, userAgent: 'trace',
  ${dispatcher === undefined ? '' : `dispatcher: ${dispatcher},`}
});
const response = await ping(client, { timeoutMs: 5000, freshConnection: true });
if (response.statusCode !== 200) throw new Error('no answer: ' + JSON.stringify(response.transportError));
// A timer of 1.2 s keeps the process up past anything a call left pending for the coming second.
setTimeout(() => { server.close(); void client.close(); }, 1200);
`;
  return timerTrace(script);
}

describe('after a call', () => {
  it('no timer wakes the thread before the next one (no undici half-second tick)', () => {
    const trace = traceOfOnePing();
    expect(trace).toContain('timeout callback 1200');
    expect(trace).not.toContain('timeout callback 499');
  });

  it('the trace sees that tick where undici times the connect itself (the check above can fail)', () => {
    // undici's own pool and connector: its 10 s connect timeout runs on the shared tick.
    const trace = traceOfOnePing('new UndiciPool(origin)');
    expect(trace).toContain('timeout callback 499');
  });
});

describe("the measuring connector's connect timeout", () => {
  const clients: ApiClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
  });

  it('ends a connection that never connects with undici’s ConnectTimeoutError, a timeout', async () => {
    // A lookup that never answers: the socket stays connecting until the timeout destroys it.
    const dispatcher = createMeasuringAgent({ connect: { timeout: 200, lookup: () => {} } });
    const client = new ApiClient({
      baseUrl: 'http://isa-monitor-test.invalid',
      apiKey: API_KEY,
      userAgent: USER_AGENT,
      dispatcher,
    });
    clients.push(client);
    const response = await ping(client, { timeoutMs: 10_000 });
    expect(response.statusCode).toBeNull();
    expect(response.transportError?.reason).toBe('timeout');
    expect(response.transportError?.code).toBe('UND_ERR_CONNECT_TIMEOUT');
    expect(response.transportError?.message).toMatch(
      /isa-monitor-test\.invalid:80, timeout: 200ms/,
    );
  });
});
