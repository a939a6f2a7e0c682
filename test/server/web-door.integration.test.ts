/**
 * `--web.config.file` and `--web.enable-lifecycle` on a real daemon process (docs/deploy.md, "TLS
 * and basic auth"; docs/cli.md): certificates from an openssl-made CA, a bcrypt hash, a real
 * Prometheus scraping over TLS with basic auth, a certificate rotated on disk, `/-/reload`, the
 * container's healthcheck, and no password in any log line.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { request, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { eventually, runCli, startDaemonProcess, type DaemonProcess } from '../support/cli.js';
import { issue, makeCa, type IssuedFiles } from '../support/openssl-ca.js';
import { checksOff } from '../support/checks-off.js';

const API_KEY = 'web-door-key-0a9b8c7d6e';
const USER = 'prometheus';
const PASSWORD = 'scrape-Passw0rd-4f3e2d1c';
const WRONG_PASSWORD = 'not-the-Passw0rd-7a6b5c';

let sim: RunningSimulator;
let dir: string;
let ca: IssuedFiles;
let configPath: string;
let daemon: DaemonProcess;
let url: string;

function writeConfig(environments: unknown[] | 'invalid'): void {
  const env = {
    name: 'sandbox',
    base_url: `${sim.url}/env/sandbox`,
    api_key_env: 'ISA_SANDBOX_API_KEY',
    ping: { interval: '1s', timeout: '900ms' },
    ...checksOff(['ping']),
  };
  writeFileSync(
    configPath,
    stringify({
      listen: { host: '127.0.0.1', port: 0 },
      state_file: join(dir, 'sessions.json'),
      shutdown_timeout: '5s',
      environments: environments === 'invalid' ? [{ ...env, ping: { interval: 'often' } }] : [env],
    }),
  );
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(path: string, opts: { auth?: string; method?: string } = {}): Promise<Answer> {
  const target = new URL(path, url);
  const options: RequestOptions = {
    host: target.hostname,
    port: target.port,
    path: target.pathname,
    method: opts.method ?? 'GET',
    ca: readFileSync(ca.cert),
    agent: false,
    ...(opts.auth === undefined ? {} : { auth: opts.auth }),
  };
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [API_KEY] });
  dir = mkdtempSync(join(tmpdir(), 'isa-web-door-'));
  ca = makeCa(dir);
  issue(dir, ca, 'monitor', 'server');
  configPath = join(dir, 'config.yaml');
  writeConfig([]);
  // Relative paths: from the web configuration's folder, as exporter-toolkit reads them.
  writeFileSync(
    join(dir, 'web.yml'),
    stringify({
      tls_server_config: {
        cert_file: 'monitor.crt',
        key_file: 'monitor.key',
        min_version: 'TLS12',
      },
      basic_auth_users: { [USER]: bcrypt.hashSync(PASSWORD, 10) },
      http_server_config: { headers: { 'Strict-Transport-Security': 'max-age=31536000' } },
    }),
  );
  daemon = startDaemonProcess(
    ['--config', configPath, '--web.config.file', join(dir, 'web.yml'), '--web.enable-lifecycle'],
    { ISA_SANDBOX_API_KEY: API_KEY },
  );
  url = await daemon.url;
  // Ready once the measurement thread started, which from the sources (tsx) takes a while.
  await eventually(
    async () => ((await call('/readyz', { auth: right })).status === 200 ? true : undefined),
    30_000,
    'the daemon ready',
  );
}, 60_000);

afterAll(async () => {
  daemon?.child.kill('SIGTERM');
  await daemon?.exit;
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const right = `${USER}:${PASSWORD}`;
const wrong = `${USER}:${WRONG_PASSWORD}`;

describe('the daemon behind TLS and basic auth', () => {
  it('serves HTTPS and asks every endpoint for the password', async () => {
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const paths = [
      '/metrics',
      '/healthz',
      '/readyz',
      '/api/status',
      '/api/history',
      '/api/uptime',
      '/api/drift',
    ];
    for (const path of [...paths, '/', '/badge/sandbox.svg', '/badge/sandbox/uptime.svg']) {
      // bcrypt costs ~0.1 s a wrong try: the wrong ones on two endpoints, none on every one.
      const tries = ['/metrics', '/healthz'].includes(path) ? [wrong, `nobody:${PASSWORD}`] : [];
      for (const auth of [undefined, ...tries]) {
        const refused = await call(path, auth === undefined ? {} : { auth });
        expect([path, refused.status]).toEqual([path, 401]);
        expect(refused.headers['www-authenticate']).toBe(
          'Basic realm="isa-monitor", charset="UTF-8"',
        );
        expect(refused.headers['strict-transport-security']).toBe('max-age=31536000');
      }
      const served = await call(path, { auth: right });
      // The status page answers 503 in a checkout whose page is not built (npm run build).
      expect([path, served.status]).toEqual([
        path,
        path === '/' && served.status === 503 ? 503 : 200,
      ]);
      expect(served.headers['strict-transport-security']).toBe('max-age=31536000');
    }
    expect((await call('/-/reload', { method: 'POST', auth: wrong })).status).toBe(401);
  }, 60_000);

  it('is scraped by a real Prometheus over TLS with basic auth, and refused with a wrong password', async () => {
    const promDir = join(dir, 'prometheus');
    const port = await freePort();
    const target = new URL(url).host;
    const job = (name: string, password: string) => ({
      job_name: name,
      scheme: 'https',
      tls_config: { ca_file: ca.cert },
      basic_auth: { username: USER, password },
      static_configs: [{ targets: [target] }],
    });
    mkdirSync(promDir);
    // The package scripts/test.sh installs; this test must not pass by skipping.
    expect(spawnSync('prometheus', ['--version']).status).toBe(0);
    writeFileSync(
      join(promDir, 'prometheus.yml'),
      stringify({
        global: { scrape_interval: '1s', scrape_timeout: '900ms' },
        scrape_configs: [job('right', PASSWORD), job('wrong', WRONG_PASSWORD)],
      }),
    );
    const prometheus: ChildProcess = spawn(
      'prometheus',
      [
        `--config.file=${join(promDir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(promDir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
    try {
      const targets = await eventually(
        async () => {
          const res = await fetch(`http://127.0.0.1:${port}/api/v1/targets`).catch(() => null);
          // Until it is ready, Prometheus answers 503 in plain text.
          if (res === null || !res.ok) return null;
          const body = (await res.json()) as {
            data: {
              activeTargets: Array<{ labels: { job: string }; health: string; lastError: string }>;
            };
          };
          const found = body.data.activeTargets;
          const health = Object.fromEntries(found.map((t) => [t.labels.job, t.health]));
          // Polled until settled: a scrape on a loaded machine may time out once.
          return health['right'] === 'up' && health['wrong'] === 'down' ? found : null;
        },
        30_000,
        'both targets scraped',
      );
      const byJob = Object.fromEntries(targets.map((t) => [t.labels.job, t]));
      expect(byJob['right']).toMatchObject({ health: 'up', lastError: '' });
      expect(byJob['wrong']?.health).toBe('down');
      expect(byJob['wrong']?.lastError).toContain('401');
      // `up` as Prometheus stores it: 1 for the right password, 0 for the wrong one (the same
      // scrape as the health above, or a later one on a loaded machine).
      const upByJob = async () => {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=up`);
        const body = (await res.json()) as {
          data: { result: Array<{ metric: { job: string }; value: [number, string] }> };
        };
        return Object.fromEntries(body.data.result.map((r) => [r.metric.job, r.value[1]]));
      };
      const up = await eventually(
        async () => {
          const now = await upByJob();
          return now['right'] === '1' && now['wrong'] === '0' ? now : null;
        },
        10_000,
        'up 1 and 0',
      );
      expect(up).toEqual({ right: '1', wrong: '0' });
    } finally {
      prometheus.kill('SIGTERM');
    }
  }, 60_000);

  it('serves a certificate rotated on disk from the next connection on, without a restart', async () => {
    const serial = (): Promise<string> =>
      new Promise((resolve, reject) => {
        const target = new URL(url);
        const socket = tlsConnect(
          {
            host: '127.0.0.1',
            port: Number(target.port),
            ca: readFileSync(ca.cert),
            servername: 'localhost',
          },
          () => {
            resolve(socket.getPeerCertificate().serialNumber);
            socket.destroy();
          },
        );
        socket.on('error', reject);
      });
    const before = await serial();
    // Written beside and moved in place, as cert-manager's atomic writer does.
    const next = issue(dir, ca, 'monitor-next', 'server');
    copyFileSync(next.key, join(dir, 'monitor.key.new'));
    copyFileSync(next.cert, join(dir, 'monitor.crt.new'));
    spawnSync('mv', [join(dir, 'monitor.key.new'), join(dir, 'monitor.key')]);
    spawnSync('mv', [join(dir, 'monitor.crt.new'), join(dir, 'monitor.crt')]);
    const after = await eventually(
      async () => {
        const now = await serial();
        return now !== before ? now : null;
      },
      10_000,
      'the new certificate',
    );
    expect(after).not.toBe(before);
    expect((await call('/healthz', { auth: right })).status).toBe(200);
  }, 30_000);

  it('reloads on POST and PUT /-/reload once applied, answers 500 with the problems, one at a time', async () => {
    writeConfig([]);
    const applied = await call('/-/reload', { method: 'POST', auth: right });
    expect(applied).toMatchObject({ status: 200, body: 'configuration reloaded\n' });
    writeConfig('invalid');
    const refused = await call('/-/reload', { method: 'PUT', auth: right });
    expect(refused.status).toBe(500);
    expect(refused.body).toContain('environments[0].ping.interval');
    writeConfig([]);
    const before = daemon.output().split('"msg":"configuration reloaded"').length;
    const together = await Promise.all(
      [1, 2, 3].map(() => call('/-/reload', { method: 'POST', auth: right })),
    );
    expect(together.map((a) => a.status)).toEqual([200, 200, 200]);
    // Three reloads, one after the other (the log is written through a pipe, so it may lag).
    await eventually(
      () => daemon.output().split('"msg":"configuration reloaded"').length === before + 3,
      5_000,
      'three reloads logged',
    );
    expect((await call('/-/reload', { auth: right })).status).toBe(405);
  }, 30_000);

  it('passes the container healthcheck given the protocol and credentials, and fails without', async () => {
    writeFileSync(join(dir, 'password'), `${PASSWORD}\n`);
    const port = new URL(url).port;
    const check = (env: Record<string, string>) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/healthcheck.ts'], {
          env: { PATH: process.env['PATH'], ISA_MONITOR_LISTEN_PORT: port, ...env },
          stdio: 'ignore',
        });
        child.on('exit', (code) => resolve(code));
      });
    const tls = { ISA_MONITOR_HEALTHCHECK_TLS: 'true' };
    const auth = {
      ISA_MONITOR_HEALTHCHECK_USER: USER,
      ISA_MONITOR_HEALTHCHECK_PASSWORD_FILE: join(dir, 'password'),
    };
    expect(await check({ ...tls, ...auth })).toBe(0);
    expect(await check(tls)).toBe(1);
    expect(await check(auth)).toBe(1);
  }, 30_000);

  it('logs no password, right or wrong', () => {
    const output = daemon.output();
    expect(output).not.toContain(PASSWORD);
    expect(output).not.toContain(WRONG_PASSWORD);
    expect(output).not.toContain(Buffer.from(right).toString('base64'));
    expect(output).not.toContain(Buffer.from(wrong).toString('base64'));
  });
});

describe('an invalid web configuration', () => {
  it('stops the start with exit 2 and every problem with its key path', async () => {
    const bad = join(dir, 'bad-web.yml');
    writeFileSync(
      bad,
      stringify({
        tls_server_config: {
          cert_file: 'missing.crt',
          client_auth_type: 'Sometimes',
          cipher_suites: [],
        },
        basic_auth_users: { alice: 'plaintext-password' },
        http_server_config: { headers: { 'X-Frame-Options': 'allow' } },
        rate_limit: { interval: '1s' },
      }),
    );
    const run = await runCli(['run', '--config', configPath, '--web.config.file', bad], {
      env: { ISA_SANDBOX_API_KEY: API_KEY },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('web configuration invalid: 6 problem(s)');
    for (const key of [
      'tls_server_config.cipher_suites: not supported by isa-monitor',
      'tls_server_config.key_file: required',
      'tls_server_config.client_auth_type: must be one of',
      'basic_auth_users.alice: must be a bcrypt hash',
      'http_server_config.headers.X-Frame-Options: must be one of deny, sameorigin',
      'rate_limit: not supported by isa-monitor',
    ]) {
      expect(run.stderr).toContain(key);
    }
    expect(run.stderr).not.toContain('plaintext-password');
    // Nothing started: the process never listened.
    expect(run.stdout).not.toContain('"msg":"serving');
  }, 30_000);
});
