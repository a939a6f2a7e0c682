/**
 * A `101 Switching Protocols` answer to a client that asked for no upgrade, from a raw loopback
 * server (node:http cannot send one unasked): the call still ends by its deadline, with a bounded
 * reason and a stable code, never with the HTTP library's internal assertion text.
 */
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { ping } from '../../src/checks/ping/request.js';
import { API_KEY, USER_AGENT } from './helpers.js';

/** Answers every request with `answer` and then a body byte every 100 ms, never closing. */
async function switchingServer(answer: string): Promise<{ url: string; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    const trickle = setInterval(() => socket.write('x'), 100);
    socket.on('close', () => {
      clearInterval(trickle);
      sockets.delete(socket);
    });
    socket.once('data', () => socket.write(`${answer}{"message":"pong"} and more body`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe('ApiClient and an unrequested 101 Switching Protocols', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  for (const fresh of [false, true]) {
    it(`ends the call by its deadline as a protocol error (fresh connection: ${fresh})`, async () => {
      const server = await switchingServer('HTTP/1.1 101 Switching Protocols\r\n\r\n');
      cleanups.push(() => server.close());
      const client = new ApiClient({ baseUrl: server.url, apiKey: API_KEY, userAgent: USER_AGENT });
      cleanups.push(() => client.close());
      const timeoutMs = 1500;
      const called = performance.now();
      const response = await ping(client, { timeoutMs, freshConnection: fresh });
      const ended = performance.now() - called;

      expect(ended).toBeLessThan(timeoutMs + 1000);
      expect(response.statusCode).toBeNull();
      expect(response.transportError).toEqual({
        reason: 'network_error',
        code: 'UNEXPECTED_UPGRADE',
        message: 'the server switched protocols (101) without being asked',
      });
      expect(JSON.stringify(response)).not.toContain('==');
      expect(JSON.stringify(response)).not.toContain(API_KEY);
    });
  }
});
