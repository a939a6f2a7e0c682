/**
 * Demo mode: an embedded simulator playing the demo fault timeline, watched as two environments
 * on short intervals, so every panel and alert has something to show within minutes.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { CHECK_LIST } from '../checks/index.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { formatProblems, validateConfigDocument, type MonitorConfig } from '../config/index.js';
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
  // Over HTTPS with a client certificate, as a partner that wants mutual TLS: the tls check shows
  // the partner's certificate and ours (docs/configuration.md, "Client certificates").
  const simulator = await startSimulator({
    tls: { clientCertificateDays: DEMO_CLIENT_CERTIFICATE_DAYS },
    apiKeys: keys,
    mode: 'fast',
    // Long enough to show on the ingest-lag panel, short against the demo's lag bound.
    analyticsIngestDelayMs: 10_000,
    timeline: DEMO_TIMELINE,
    logger: logger.child({ component: 'simulator' }),
    port: 0,
    host: '127.0.0.1',
  });
  // The demo's config goes through the same validation and defaults as a user's file; its keys
  // are handed over as variables of a private environment, never the process's.
  const keyEnv = Object.fromEntries(
    DEMO_ENVIRONMENTS.map((name, i) => [demoKeyVar(name), keys[i]]),
  );
  const stateDir = join(tmpdir(), `isa-monitor-demo-${process.pid}`);
  const files = await writeDemoCertificates(stateDir, simulator);
  const loaded = validateConfigDocument(
    {
      listen,
      state_file: join(stateDir, 'sessions.json'),
      environments: DEMO_ENVIRONMENTS.map((name) => ({
        name,
        base_url: `${simulator.url}/env/${name}`,
        api_key_env: demoKeyVar(name),
        ca_file: files.ca,
        client_cert_file: files.cert,
        client_key_file: files.key,
        request_budget_per_second: 5,
        ...demoSections(),
      })),
    },
    { checks: CHECK_LIST, env: keyEnv },
  );
  // A deprecated key in the demo's own configuration is a mistake here, not a user's to fix.
  const problems = loaded.ok ? loaded.warnings : loaded.problems;
  if (!loaded.ok || problems.length > 0) {
    await simulator.close();
    throw new Error(`the demo configuration is invalid:\n${formatProblems(problems)}`);
  }
  return { simulator, apiKeys: keys, config: loaded.config };
}

/**
 * The demo's section of each check, quick enough to show everything within minutes. A check this
 * build does not register is left out, so the demo runs whatever checks the build has.
 */
const DEMO_SECTIONS: Readonly<Record<string, object>> = {
  ping: { interval: '15s', timeout: '5s' },
  providers: { interval: '1m', timeout: '20s' },
  // Both certificates on the status page within a minute, not an hour.
  tls: { interval: '1m' },
  coverage: { interval: '1m', timeout: '20s', states: ['CO', 'NY'], min_providers: 1 },
  lifecycle: {
    interval: '30s',
    timeout: '28s',
    poll_interval: '2s',
    poll_timeout: '20s',
    campaign_id: 'isa-monitor-demo',
    addresses: [
      { street1: '2 Pending Ave', zip: '80202', expect: 'available' },
      { street1: '1 Instant Way', zip: '80202', expect: 'available' },
      { street1: '3 No Service Rd', city: 'Denver', state: 'CO', expect: 'no_service' },
      { street1: '5 Retry Ln', zip: '80202', expect: 'available' },
    ],
  },
  // The stall of the demo timeline makes sessions late after 2 minutes.
  analytics: {
    enabled: true,
    interval: '30s',
    timeout: '25s',
    ingest_lag_bound: '2m',
    ingest_timeout: '10m',
  },
};

/** The demo's sections of the registered checks. */
function demoSections(): Record<string, object> {
  return Object.fromEntries(
    CHECK_LIST.flatMap((check) => {
      const section = DEMO_SECTIONS[check.name];
      return section === undefined ? [] : [[check.name, section]];
    }),
  );
}

/** The demo's client certificate is valid for this many days: a month, far from its ticket. */
const DEMO_CLIENT_CERTIFICATE_DAYS = 30;

/** Writes the simulator's CA and the client certificate it issued, for the demo's config. */
async function writeDemoCertificates(
  dir: string,
  simulator: RunningSimulator,
): Promise<{ ca: string; cert: string; key: string }> {
  const certificates = simulator.certificates;
  if (!certificates?.client) throw new Error('the demo simulator made no client certificate');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const files = {
    ca: join(dir, 'simulator-ca.pem'),
    cert: join(dir, 'client.pem'),
    key: join(dir, 'client-key.pem'),
  };
  await writeFile(files.ca, certificates.caPem);
  await writeFile(files.cert, certificates.client.certPem);
  await writeFile(files.key, certificates.client.keyPem, { mode: 0o600 });
  return files;
}

function demoKeyVar(environment: string): string {
  return `DEMO_${environment.toUpperCase()}_API_KEY`;
}
