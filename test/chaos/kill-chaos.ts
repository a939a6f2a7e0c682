/**
 * SIGKILL chaos with real processes: the daemon is started and killed again and again, at random
 * moments and aimed at creates and closes in flight, with `check lifecycle` runs on the same state
 * file interleaved (some killed too). A last daemon then closes what is left. At the end no session
 * a token was ever written for may be open, except those reported as unrecoverable; the ledger
 * must parse and no temporary file may remain. Used by `kill-chaos.test.ts` (a few kills in CI)
 * and `bench/chaos.ts` (50 and more).
 */
import { readFile, readdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { seededRandom } from '../../src/simulator/random.js';
import { startSimulator } from '../../src/simulator/index.js';
import { UNRECOVERABLE_MESSAGE } from '../../src/sessions/unrecoverable.js';
import { collect, eventually, spawnCli, startDaemonProcess } from '../support/cli.js';
import { writeDaemonConfig } from '../support/daemon-config.js';
import { startFuzzProxy } from './proxy.js';

const KEY = 'kill-chaos-key-1a2b3c4d5e6f';
const ENV = { ISA_PRODUCTION_API_KEY: KEY };

export interface KillCounts {
  kills: number;
  killsDuringCreate: number;
  killsDuringClose: number;
  checks: number;
  checksKilled: number;
  failures: number;
  sessionsLeftOpen: number;
  unrecoverable: number;
  /** Polls or reads of a running lifecycle answered 410: a session closed under its run. */
  closedUnderARun: number;
  failureDetails: string[];
}

export async function runKillChaos(opts: { kills: number; seed: number }): Promise<KillCounts> {
  const random = seededRandom(opts.seed);
  const sim = await startSimulator({ apiKeys: [KEY], qualifyDelayMs: 150 });
  // Creates and closes take a moment, so kills aimed at them land while they are in flight.
  sim.faults.add({
    endpoint: 'create_session',
    fault: { kind: 'latency', distribution: { min: 100, max: 400 } },
  });
  sim.faults.add({
    endpoint: 'close_session',
    fault: { kind: 'latency', distribution: { min: 50, max: 250 } },
  });
  const proxy = await startFuzzProxy(sim.url);
  const config = await writeDaemonConfig(`${proxy.url}/env/production`);
  const counts: KillCounts = {
    kills: 0,
    killsDuringCreate: 0,
    killsDuringClose: 0,
    checks: 0,
    checksKilled: 0,
    failures: 0,
    sessionsLeftOpen: 0,
    unrecoverable: 0,
    closedUnderARun: 0,
    failureDetails: [],
  };
  const outputs: string[] = [];
  const fail = (detail: string): void => {
    counts.failures += 1;
    if (counts.failureDetails.length < 20) counts.failureDetails.push(detail);
  };
  const arrivalAfter = (method: string, since: number, timeoutMs: number) =>
    eventually(
      () => proxy.arrivals.find((a) => a.method === method && a.at > since),
      timeoutMs,
      `a ${method} request`,
    ).catch(() => null);

  try {
    for (let i = 0; i < opts.kills; i++) {
      const daemon = startDaemonProcess(['--config', config.path], ENV);
      await daemon.url;
      const since = performance.now();
      let check: ChildProcess | null = null;
      let checkRun: Promise<unknown> | null = null;
      if (i % 3 === 1) {
        check = spawnCli(['check', 'lifecycle', '--config', config.path, '--json'], ENV);
        checkRun = collect(check, 60_000).then((run) => {
          outputs.push(run.stdout + run.stderr);
          counts.checks += 1;
        });
      }
      const aim = random();
      if (aim < 0.35) {
        if (await arrivalAfter('POST', since, 8_000)) {
          await new Promise((r) => setTimeout(r, 20 + random() * 60));
          counts.killsDuringCreate += 1;
        }
      } else if (aim < 0.6) {
        if (await arrivalAfter('DELETE', since, 8_000)) {
          await new Promise((r) => setTimeout(r, 10 + random() * 40));
          counts.killsDuringClose += 1;
        }
      } else {
        await new Promise((r) => setTimeout(r, 200 + random() * 2_500));
      }
      if (check && random() < 0.5) {
        check.kill('SIGKILL');
        counts.checksKilled += 1;
      }
      daemon.child.kill('SIGKILL');
      outputs.push((await daemon.exit).stdout);
      await checkRun;
      counts.kills += 1;
    }

    // The next start: a daemon that closes what every killed process left.
    const last = startDaemonProcess(['--config', config.path], ENV);
    await last.url;
    // Settled once the last daemon has recorded every close: a session the simulator has closed
    // but the ledger still lists is a close whose answer the daemon has not yet handled (its
    // start-up sweep or a run's cleanup in flight). A SIGTERM then cuts that close, and what the
    // shutdown cannot close within its 2 s stays listed for the next start (docs/cli.md).
    const settled = async (): Promise<boolean> => {
      const ledger = JSON.parse(await readFile(config.stateFile, 'utf8')) as {
        sessions: Array<{ token: string; owner?: { pid: number } }>;
        intents: unknown[];
      };
      const lost = countUnrecoverable([...outputs, last.output()]);
      const open = new Set(sim.state.openSessions('production').map((s) => s.token));
      return (
        ledger.intents.length === 0 &&
        ledger.sessions.every((s) => s.owner?.pid === last.child.pid && open.has(s.token)) &&
        open.size <= lost
      );
    };
    await eventually(settled, 30_000, 'the last daemon to close every leftover').catch(
      (err: unknown) => fail(String(err)),
    );
    last.child.kill('SIGTERM');
    const exit = await last.exit;
    if (exit.code !== 0) fail(`the last daemon exited with ${String(exit.code)}`);
    outputs.push(exit.stdout);

    counts.unrecoverable = countUnrecoverable(outputs);
    const open = sim.state.openSessions('production').length;
    counts.sessionsLeftOpen = Math.max(0, open - counts.unrecoverable);
    if (counts.sessionsLeftOpen > 0) fail(`${counts.sessionsLeftOpen} closable session(s) open`);
    counts.closedUnderARun = countClosedUnderARun(outputs);
    if (counts.closedUnderARun > 0) fail(`${counts.closedUnderARun} run(s) met 410 mid-run`);
    const ledger = JSON.parse(await readFile(config.stateFile, 'utf8')) as { sessions: unknown[] };
    if (ledger.sessions.length > 0) {
      // What the last daemon said about sessions: enough to tell a close that failed from one
      // that was never tried.
      const said = exit.stdout
        .split('\n')
        .filter((line) => /session|sweep|shutting|stopped/i.test(line))
        .slice(-15);
      fail(`${ledger.sessions.length} session(s) still listed\n${said.join('\n')}`);
    }
    const leftovers = (await readdir(dirname(config.stateFile))).filter((n) => n.endsWith('.tmp'));
    if (leftovers.length > 0) fail(`temporary files left: ${leftovers.join(', ')}`);
  } finally {
    await proxy.close();
    await sim.close();
  }
  return counts;
}

function countUnrecoverable(outputs: string[]): number {
  return outputs.reduce((n, o) => n + o.split(UNRECOVERABLE_MESSAGE).length - 1, 0);
}

/** Lifecycle results whose poll or read met 410 (only `verify_gone` may see one). */
function countClosedUnderARun(outputs: string[]): number {
  let n = 0;
  for (const line of outputs.join('\n').split('\n')) {
    const start = line.indexOf('{');
    if (!line.includes('lifecycle') || start < 0) continue;
    try {
      const doc = JSON.parse(line.slice(start)) as {
        steps?: Array<{ name: string; statusCode?: number; status_code?: number }>;
      };
      const bad = (doc.steps ?? []).some(
        (s) =>
          s.name !== 'verify_gone' && s.name !== 'close' && (s.statusCode ?? s.status_code) === 410,
      );
      if (bad) n += 1;
    } catch {
      // Not a JSON line (pretty output, a trace).
    }
  }
  return n;
}
