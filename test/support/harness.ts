/**
 * Test harness: a simulator on a loopback socket that also logs every request it receives (time,
 * method, path), and an EnvironmentRuntime pointed at it with a temporary session ledger.
 */
import { createServer, type Server } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckLogger } from '../../src/kernel/check.js';
import { CHECK_LIST, findCheck, type CheckConfigs } from '../../src/checks/index.js';
import type { EnvironmentConfig, EnvironmentSettings } from '../../src/config/index.js';
import type { CheckConfigBase, CheckSection } from '../../src/config/section.js';
import { EnvironmentRuntime } from '../../src/environment.js';
import { SessionLedger } from '../../src/sessions/ledger.js';
import { createSimulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { CHECK_FIXTURES } from './check-fixtures.js';

export const API_KEY = 'test-key-0123456789abcdef';

export interface LoggedRequest {
  at: number;
  method: string;
  path: string;
  /** The simulator's X-Request-Id for this request, once it answered. */
  requestId?: string;
}

export interface TestSimulator {
  url: string;
  requests: LoggedRequest[];
  simulator: ReturnType<typeof createSimulator>;
  close(): Promise<void>;
}

/** Starts a simulator that records each request's arrival time (monotonic ms). */
export async function startTestSimulator(
  options: Partial<SimulatorOptions> = {},
): Promise<TestSimulator> {
  const simulator = createSimulator({ apiKeys: [API_KEY], qualifyDelayMs: 150, ...options });
  const requests: LoggedRequest[] = [];
  const server: Server = createServer((req, res) => {
    if (!req.url?.startsWith('/__sim/')) {
      const entry: LoggedRequest = {
        at: performance.now(),
        method: req.method ?? '',
        path: req.url ?? '',
      };
      requests.push(entry);
      res.once('finish', () => {
        const id = res.getHeader('x-request-id');
        if (typeof id === 'string') entry.requestId = id;
      });
    }
    simulator.app(req, res);
  });
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    simulator,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

/** An environment config with short intervals, for tests. */
export type EnvironmentOverrides = Partial<EnvironmentSettings> & {
  [C in keyof CheckConfigs]?: Partial<CheckConfigs[C]>;
};

/**
 * Every registered check's section as an unconfigured file gives it, but disabled, and over it
 * what the check's fixtures set for tests (`config.test`): the checks the tests run in every
 * environment (ping, lifecycle) come enabled, with short intervals; the others stay off, as in a
 * file that does not mention them, until a test enables the one it is about.
 */
function testSections(): Record<string, object> {
  return Object.fromEntries(
    CHECK_FIXTURES.map(({ check, fixtures }) => {
      const section = sectionOfCheck(check);
      const disabled = section.toConfig(section.schema.parse({ enabled: false }), {
        baseUrl: 'http://127.0.0.1',
      });
      return [check, { ...disabled, ...fixtures.config.test }];
    }),
  );
}

function sectionOfCheck(name: string): CheckSection {
  const check = findCheck(name);
  if (check === undefined) throw new Error(`no registered check ${name}`);
  return check.config;
}

export function testEnvironment(
  baseUrl: string,
  overrides: EnvironmentOverrides = {},
): EnvironmentConfig {
  const sections = testSections();
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(overrides)) {
    const section = sections[key];
    if (section === undefined) {
      settings[key] = value;
      continue;
    }
    const override = (value ?? {}) as Partial<CheckConfigBase>;
    // As in the file: a section with no request timeout of its own (its run is one request, as
    // ping's) times its request out at its timeout unless set apart.
    const requestTimeout =
      override.timeoutMs !== undefined && sectionOfCheck(key).defaults.requestTimeout === undefined
        ? { requestTimeoutMs: override.timeoutMs }
        : {};
    sections[key] = { ...section, ...requestTimeout, ...override };
  }
  return {
    ...(sections as unknown as CheckConfigs),
    name: 'production',
    baseUrl,
    apiKey: API_KEY,
    apiKeySource: { kind: 'env', name: 'ISA_PRODUCTION_API_KEY' },
    thresholds: { expectedMs: 100, warningMs: 500, criticalMs: 1000 },
    requestBudgetPerSecond: 50,
    ...settings,
  };
}

export interface CapturedLog {
  level: string;
  fields: object;
  msg: string;
}

/** A CheckLogger that keeps every line, for assertions (and key-leak checks). */
export function captureLogger(): { log: CheckLogger; lines: CapturedLog[] } {
  const lines: CapturedLog[] = [];
  const at =
    (level: string) =>
    (fields: object, msg: string): void => {
      lines.push({ level, fields, msg });
    };
  return {
    lines,
    log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
  };
}

/** A runtime for `config` with a fresh ledger in a temporary directory. */
export async function testRuntime(
  config: EnvironmentConfig,
  stateFile?: string,
): Promise<{ runtime: EnvironmentRuntime; ledger: SessionLedger; lines: CapturedLog[] }> {
  const path = stateFile ?? join(await mkdtemp(join(tmpdir(), 'isa-test-')), 'sessions.json');
  const ledger = await SessionLedger.open(path);
  const { log, lines } = captureLogger();
  const runtime = new EnvironmentRuntime(config, {
    checks: CHECK_LIST,
    ledger,
    userAgent: 'isa-monitor/test',
    log,
  });
  return { runtime, ledger, lines };
}
