/**
 * `location` and `control` through the whole daemon (in-process, measurement inline): every
 * series carries the location, and the control probe's result reaches `/metrics`.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { eventually } from '../support/cli.js';
import { startDaemonFromYaml } from '../support/daemon.js';
import { checksOffLines } from '../support/checks-off.js';

const KEY = 'location-key-0123456789abcdef';
let sim: RunningSimulator;
let control: Server;
let controlUrl: string;
const controlHeaders: IncomingHttpHeaders[] = [];
beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [KEY] });
  control = createServer((req, res) => {
    controlHeaders.push(req.headers);
    res.end('ok');
  });
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await sim.close();
  await new Promise<void>((resolve) => control.close(() => resolve()));
});

async function daemonWith(top: string[]): Promise<Daemon> {
  const dir = await mkdtemp(join(tmpdir(), 'isa-location-'));
  const yaml = [
    ...top,
    'listen: { host: 127.0.0.1, port: 0 }',
    `state_file: ${join(dir, 'sessions.json')}`,
    'environments:',
    '  - name: production',
    `    base_url: ${sim.url}`,
    '    api_key_env: LOCATION_KEY',
    '    ping: { interval: 1s, timeout: 500ms }',
    ...checksOffLines(['ping']),
  ].join('\n');
  return startDaemonFromYaml(yaml, { LOCATION_KEY: KEY }, dir);
}

const scrape = async (daemon: Daemon) => (await fetch(`${daemon.url}/metrics`)).text();
const isaSamples = (text: string) => text.split('\n').filter((line) => line.startsWith('isa_'));

describe('location and control in the daemon', () => {
  it('labels every series with the location, and reports the control probe', async () => {
    const daemon = await daemonWith([
      'location: eu-west',
      `control: { url: "${controlUrl}", interval: 1s, timeout: 500ms }`,
    ]);
    try {
      // The control probe's series exist from the start, and its first probe can time out on a
      // busy machine (500 ms here, and the first probe also pays for loading Node's fetch): wait
      // for a probe that succeeded, whatever its labels, then check the labels below.
      const text = await eventually(
        async () => {
          const t = await scrape(daemon);
          return t.includes('isa_ping_up{') && /^isa_control_probe_success(\{[^}]*\})? 1$/m.test(t)
            ? t
            : undefined;
        },
        25_000,
        'a first ping and a successful control probe',
      );
      const samples = isaSamples(text);
      // Every series of a ping-only environment (63, docs/metrics.md) and the monitor's own.
      expect(samples.length).toBeGreaterThan(60);
      expect(samples.filter((line) => !line.includes(`location="eu-west"`))).toEqual([]);
      expect(text).toMatch(/^isa_control_probe_success\{location="eu-west"\} 1$/m);
      expect(text).toMatch(
        /^isa_control_probe_attempts_total\{result="ok",location="eu-west"\} [1-9]/m,
      );
      expect(JSON.stringify(controlHeaders)).not.toContain(KEY);
    } finally {
      await daemon.stop();
    }
  }, 30_000);

  it('exports no location label and no control series when neither is configured', async () => {
    const daemon = await daemonWith([]);
    try {
      const text = await eventually(
        async () => {
          const t = await scrape(daemon);
          return t.includes('isa_ping_up{') ? t : undefined;
        },
        10_000,
        'a first ping',
      );
      expect(text).not.toContain('location=');
      expect(text).not.toContain('isa_control_probe');
    } finally {
      await daemon.stop();
    }
  });
});
