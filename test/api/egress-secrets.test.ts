/**
 * The proxy password and the client key are secrets like the API key (docs/configuration.md,
 * "Egress proxy", "Client certificates"): a hostile proxy that echoes the credentials it received
 * in its headers and body gets them redacted from the response, and the logger scrubs both from
 * every line.
 */
import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { environmentSecrets, type EnvironmentSettings } from '../../src/config/index.js';
import { createLogger } from '../../src/logging.js';
import { generateCertificates } from '../../src/simulator/certificates.js';
import { ping } from '../../src/checks/ping/request.js';
import { API_KEY, USER_AGENT, startServer, type TestServer } from './helpers.js';

const PASSWORD = 'proxy-Pass-31415926';

function expectAbsent(value: unknown, secrets: string[]): void {
  const texts = [JSON.stringify(value), inspect(value, { depth: null, showHidden: true })];
  for (const text of texts) {
    for (const secret of secrets) expect(text).not.toContain(secret);
  }
}

describe('the proxy password', () => {
  let proxy: TestServer | undefined;
  let client: ApiClient | undefined;
  afterEach(async () => {
    await client?.close();
    await proxy?.close();
  });

  it('is redacted from what a proxy echoes back, in headers and bodies', async () => {
    proxy = await startServer((req, res) => {
      const credentials = String(req.headers['proxy-authorization'] ?? '');
      const decoded = Buffer.from(credentials.replace(/^Basic /, ''), 'base64').toString();
      res.writeHead(502, {
        'content-type': 'application/json',
        'x-echo': `${credentials} ${decoded}`,
      });
      res.end(
        JSON.stringify({ message: `refused ${credentials} ${decoded}`, request_id: decoded }),
      );
    });
    client = new ApiClient({
      baseUrl: 'http://partner.example.invalid:8080',
      apiKey: API_KEY,
      userAgent: USER_AGENT,
      proxy: {
        url: proxy.url,
        username: 'monitor',
        password: PASSWORD,
        noProxy: [],
        connectHeaders: {},
      },
    });
    const response = await ping(client, { timeoutMs: 5_000 });
    expect(response.statusCode).toBe(502);
    // It went to the proxy in absolute form, with the credentials.
    expect(proxy.requests[0]?.url).toBe('http://partner.example.invalid:8080/ping');
    const basic = Buffer.from(`monitor:${PASSWORD}`).toString('base64');
    expectAbsent(response, [PASSWORD, basic]);
  });
});

describe('the logger', () => {
  it('scrubs the proxy password and the client key from every line', async () => {
    const client = (await generateCertificates({ clientCertificateDays: 10 })).client;
    const key = client?.keyPem ?? '';
    const environment = {
      apiKey: API_KEY,
      proxy: {
        url: 'http://proxy:3128',
        password: PASSWORD,
        noProxy: [],
        connectHeaders: {},
        source: 'proxy_url',
      },
      clientCertificate: { certFile: '/c', keyFile: '/k', cert: '', key, notAfter: 0 },
    } as unknown as EnvironmentSettings;
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({
      level: 'info',
      secrets: environmentSecrets(environment),
      destination,
    });
    logger.info(
      { detail: `proxy said ${PASSWORD}`, pem: key },
      `key ${key.trim()} password ${PASSWORD}`,
    );
    logger.flush();
    await new Promise((resolve) => setImmediate(resolve));
    const text = lines.join('');
    expect(text).toContain('proxy said');
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain(key.trim().split('\n')[1] ?? 'unreachable');
  });
});
