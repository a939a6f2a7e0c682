/**
 * `check` and the daemon share one ledger (finding 1 of the "share one ledger" issue), with real
 * processes on one state file:
 * - `check ping` next to a daemon whose lifecycle session is pending closed that session (its
 *   start-up sweep took every session of the environment); the daemon's next poll got 410;
 * - a `check lifecycle` killed mid-poll left a session no ledger listed, because the daemon
 *   rewrote the file without it.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import {
  eventually,
  runCli,
  spawnCli,
  startDaemonProcess,
  type DaemonProcess,
} from '../support/cli.js';
import { writeDaemonConfig } from '../support/daemon-config.js';

const KEY = 'shared-ledger-key-0f1e2d3c4b';
const ENV = { ISA_PRODUCTION_API_KEY: KEY };
let sim: RunningSimulator;
const daemons: DaemonProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [KEY], qualifyDelayMs: 200 });
});
afterAll(() => sim.close());
afterEach(() => {
  for (const d of daemons.splice(0)) d.child.kill('SIGKILL');
});

describe('check and the daemon on one state file', () => {
  it("check's sweep leaves the daemon's pending session alone", async () => {
    const config = await writeDaemonConfig(`${sim.url}/env/production`, {
      street1: '6 Forever Pending Ct',
      lifecycle: { interval: '6s', timeout: '5500ms', poll_interval: '200ms', poll_timeout: '5s' },
    });
    const daemon = startDaemonProcess(['--config', config.path], ENV);
    daemons.push(daemon);
    const session = await eventually(
      () => sim.state.openSessions('production')[0],
      15_000,
      "the daemon's pending session",
    );
    await eventually(
      async () =>
        (await readFile(config.stateFile, 'utf8').catch(() => '')).includes(session.token),
      5_000,
      'the token in the ledger',
    );
    for (let i = 0; i < 2; i++) {
      const run = await runCli(['check', 'ping', '--config', config.path], { env: ENV });
      expect(run.code).toBe(0);
    }
    // The daemon's run ends on its own terms: the 5 s give-up, then close and 410 on verify.
    // Had a check closed its session, a poll would have met 410 and the run ended in `error`.
    const line = await eventually(
      () =>
        daemon
          .output()
          .split('\n')
          .find((l) => l.includes('"msg":"lifecycle ')),
      20_000,
      "the daemon's lifecycle result",
    );
    const run = JSON.parse(line) as {
      reason: string;
      steps: Array<{ name: string; statusCode: number }>;
    };
    expect(run.reason).toBe('qualify_timeout');
    expect(run.steps.filter((s) => s.statusCode === 410).map((s) => s.name)).toEqual([
      'verify_gone',
    ]);
    daemon.child.kill('SIGTERM');
    expect((await daemon.exit).code).toBe(0);
  });

  it('the running daemon closes the session of a check that was killed mid-poll', async () => {
    const config = await writeDaemonConfig(`${sim.url}/env/production`, {
      street1: '1 Instant Way',
    });
    const daemon = startDaemonProcess(['--config', config.path], ENV);
    daemons.push(daemon);
    await daemon.url;
    const before = new Set(sim.state.sessions().map((s) => s.token));
    const check = spawnCli(
      [
        'check',
        'lifecycle',
        '--base-url',
        `${sim.url}/env/production`,
        '--api-key-env',
        'ISA_PRODUCTION_API_KEY',
        '--environment',
        'production',
        '--address',
        '6 Forever Pending Ct, 80202',
      ],
      { ...ENV, ISA_MONITOR_STATE_FILE: config.stateFile },
    );
    const checkSession = await eventually(
      () =>
        sim.state
          .openSessions('production')
          .find((s) => !before.has(s.token) && s.params.street1 === '6 Forever Pending Ct'),
      15_000,
      "the check's pending session",
    );
    await eventually(
      async () => (await readFile(config.stateFile, 'utf8')).includes(checkSession.token),
      5_000,
      "the check's token in the shared ledger",
    );
    check.kill('SIGKILL');
    await eventually(
      () => sim.state.sessions().find((s) => s.token === checkSession.token)?.status === 'closed',
      15_000,
      "the daemon to close the killed check's session",
    );
    await eventually(
      async () => !(await readFile(config.stateFile, 'utf8')).includes(checkSession.token),
      5_000,
      'the token to leave the ledger',
    );
    daemon.child.kill('SIGTERM');
    expect((await daemon.exit).code).toBe(0);
  });
});
