/**
 * The daemon keeps the uptime record (docs/configuration.md, "The uptime record"): scheduled pings
 * go into it, a stop writes it, the next start reads it, and an environment a reload removes
 * leaves `/api/uptime` and the badges while its record stays on disk. In-process daemon,
 * measurement inline, simulator over loopback.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_LIST } from '../../src/checks/index.js';
import { parseConfigText } from '../../src/config/index.js';
import type { UptimeDocument } from '../../src/server/uptime.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { eventually } from '../support/cli.js';
import { startDaemonFromYaml } from '../support/daemon.js';
import { checksOffLines } from '../support/checks-off.js';

const KEY = 'uptime-inline-key-9f8e7d6c5b';
let sim: RunningSimulator;
let dir: string;
beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [KEY] });
  dir = await mkdtemp(join(tmpdir(), 'isa-uptime-daemon-'));
});
afterAll(() => sim.close());

function yaml(environments: string[]): string {
  return [
    'listen: { host: 127.0.0.1, port: 0 }',
    `state_file: ${join(dir, 'sessions.json')}`,
    'environments:',
    ...environments.flatMap((name) => [
      `  - name: ${name}`,
      `    base_url: ${sim.url}/env/${name}`,
      '    api_key_env: UPTIME_KEY',
      '    ping: { interval: 1s, timeout: 900ms }',
      ...checksOffLines(['ping']),
    ]),
  ].join('\n');
}

async function uptime(url: string, query = ''): Promise<UptimeDocument> {
  const res = await fetch(`${url}/api/uptime${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as UptimeDocument;
}

const todayRuns = (doc: UptimeDocument, environment: string): number =>
  doc.environments.find((e) => e.environment === environment)?.days.at(-1)?.runs ?? 0;

describe('the daemon and its uptime record', () => {
  it('records scheduled pings, writes them at stop and reads them at the next start', async () => {
    const first = await startDaemonFromYaml(
      yaml(['production', 'sandbox']),
      { UPTIME_KEY: KEY },
      dir,
    );
    try {
      await eventually(
        async () => todayRuns(await uptime(first.url), 'production') >= 3,
        15_000,
        'three pings in the record',
      );
    } finally {
      await first.stop();
    }
    const onDisk = JSON.parse(await readFile(join(dir, 'sessions.uptime.json'), 'utf8')) as {
      version: number;
      environments: Record<string, unknown>;
    };
    expect(onDisk.version).toBe(1);
    expect(Object.keys(onDisk.environments).sort()).toEqual(['production', 'sandbox']);

    const second = await startDaemonFromYaml(
      yaml(['production', 'sandbox']),
      { UPTIME_KEY: KEY },
      dir,
    );
    try {
      // At once, before this process pinged much: the runs are the earlier process's.
      const doc = await uptime(second.url, '?environment=production&days=1');
      expect(todayRuns(doc, 'production')).toBeGreaterThanOrEqual(3);
      expect(doc.environments[0]?.uptime['24h']).toBe(1);
      const badge = await fetch(`${second.url}/badge/production/uptime.svg?window=24h`);
      expect(await badge.text()).toContain('>100%</text>');

      // A reload that removes sandbox: gone from the API and the badges, kept on disk.
      const loaded = parseConfigText(yaml(['production']), {
        checks: CHECK_LIST,
        env: { UPTIME_KEY: KEY },
        cwd: dir,
      });
      if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
      await second.reload(loaded.config);
      expect((await fetch(`${second.url}/api/uptime?environment=sandbox`)).status).toBe(404);
      expect((await fetch(`${second.url}/badge/sandbox.svg`)).status).toBe(404);
      expect((await uptime(second.url)).environments.map((e) => e.environment)).toEqual([
        'production',
      ]);
    } finally {
      await second.stop();
    }
    const after = JSON.parse(await readFile(join(dir, 'sessions.uptime.json'), 'utf8')) as {
      environments: Record<string, unknown>;
    };
    expect(Object.keys(after.environments).sort()).toEqual(['production', 'sandbox']);
  }, 60_000);
});
