/**
 * Demo mode: an embedded simulator playing the demo fault timeline, watched as two environments
 * on short intervals, so every panel and alert has something to show within minutes.
 */
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { EnvironmentConfig, MonitorConfig } from '../config/index.js';
import { DEMO_TIMELINE, startSimulator, type RunningSimulator } from '../simulator/index.js';

export interface Demo {
  config: MonitorConfig;
  simulator: RunningSimulator;
  apiKeys: string[];
}

const DEMO_ENVIRONMENTS = ['sandbox', 'production'] as const;

/** Starts the simulator and builds the config that watches it. */
export async function startDemo(
  logger: Logger,
  listen: { host: string; port: number },
): Promise<Demo> {
  const keys = DEMO_ENVIRONMENTS.map(() => `demo-${randomBytes(12).toString('hex')}`);
  const simulator = await startSimulator({
    apiKeys: keys,
    mode: 'fast',
    timeline: DEMO_TIMELINE,
    logger: logger.child({ component: 'simulator' }),
    port: 0,
    host: '127.0.0.1',
  });
  const environments = DEMO_ENVIRONMENTS.map((name, i): EnvironmentConfig => ({
    name,
    baseUrl: `${simulator.url}/env/${name}`,
    apiKey: keys[i] ?? '',
    apiKeySource: { kind: 'env', name: 'demo' },
    thresholds: { expectedMs: 100, warningMs: 500, criticalMs: 1000 },
    requestBudgetPerSecond: 5,
    ping: { enabled: true, intervalMs: 15_000, timeoutMs: 5_000 },
    lifecycle: {
      enabled: true,
      intervalMs: 30_000,
      timeoutMs: 28_000,
      pollIntervalMs: 2_000,
      pollTimeoutMs: 20_000,
      campaignId: 'isa-monitor-demo',
      addresses: [
        { street1: '2 Pending Ave', zip: '80202', expect: 'available' },
        { street1: '1 Instant Way', zip: '80202', expect: 'available' },
        { street1: '3 No Service Rd', city: 'Denver', state: 'CO', expect: 'no_service' },
        { street1: '5 Retry Ln', zip: '80202', expect: 'available' },
      ],
    },
  }));
  return {
    simulator,
    apiKeys: keys,
    config: {
      listen,
      stateFile: join(tmpdir(), `isa-monitor-demo-${process.pid}`, 'sessions.json'),
      logLevel: 'info',
      shutdownTimeoutMs: 10_000,
      environments,
    },
  };
}
