import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { BroadcastChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { startDaemon } from '../../src/daemon.js';
import {
  startMeasurement,
  WORKER_YOUNG_GENERATION_MB,
  type MeasurementHost,
} from '../../src/measurement/host.js';
import type { MeasurementEvent } from '../../src/measurement/messages.js';
import type { MonitorConfig } from '../../src/config/index.js';
import { testEnvironment } from '../support/harness.js';
import { CHECK_LIST } from '../../src/checks/index.js';

const DYING_WORKER = new URL('./fixtures/dying-worker.mjs', import.meta.url);
const HEAP_WORKER = new URL('./fixtures/heap-worker.mjs', import.meta.url);

/** Tells the dying worker fixture to exit now (its `dying-worker` channel). */
function killWorker(): void {
  const channel = new BroadcastChannel('dying-worker');
  channel.postMessage('die');
  channel.close();
}

async function config(): Promise<MonitorConfig> {
  return {
    listen: { host: '127.0.0.1', port: 0 },
    stateFile: join(await mkdtemp(join(tmpdir(), 'isa-host-')), 'sessions.json'),
    logLevel: 'info',
    shutdownTimeoutMs: 1_000,
    history: { windowMs: 86_400_000, runs: 100 },
    environments: [testEnvironment('http://127.0.0.1:9')],
  };
}

/** Starts the host with a fixture as the worker's entry; `events` receives what it reports. */
async function startFixture(entry: URL, events: MeasurementEvent[]): Promise<MeasurementHost> {
  return startMeasurement({ config: await config(), userAgent: 'test' }, (e) => events.push(e), {
    mode: 'worker',
    entry,
  });
}

describe('measurement host', () => {
  it('creates the worker with its young-generation limit and its own gc, in one context', async () => {
    const events: MeasurementEvent[] = [];
    const host = await startFixture(HEAP_WORKER, events);
    const report = events.find((e) => (e.type as string) === 'heap') as unknown as {
      newSpaceBytes: number;
      ownGc: boolean;
      contexts: number;
    };
    // Unlimited, V8 grows a young generation with this many survivors to 16 MiB and more.
    expect(report.newSpaceBytes).toBeLessThanOrEqual(WORKER_YOUNG_GENERATION_MB * 1024 * 1024);
    // `--expose-gc` was set before the worker's context was made: young-generation.ts needs no
    // context of its own for `gc`.
    expect(report.ownGc).toBe(true);
    expect(report.contexts).toBe(1);
    await host.stop(1_000);
  });

  it('reports a worker that exits on its own as fatal', async () => {
    const events: MeasurementEvent[] = [];
    const host = await startFixture(DYING_WORKER, events);
    killWorker();
    await expect
      .poll(() => events.find((e) => e.type === 'fatal'), { timeout: 5_000 })
      .toEqual({
        type: 'fatal',
        message: 'measurement worker exited (code 3)',
      });
    await host.stop(100);
  });

  it('makes the daemon unready and resolves its failure when the worker dies', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => lines.push(l) });
    const daemon = await startDaemon({
      checks: CHECK_LIST,
      config: await config(),
      logger,
      build: { version: 'test', revision: 'test', nodejs: process.versions.node },
      workerEntry: DYING_WORKER,
    });
    expect((await fetch(`${daemon.url}/readyz`)).status).toBe(200);
    killWorker();
    expect(await daemon.failed).toBe('measurement worker exited (code 3)');
    expect((await fetch(`${daemon.url}/readyz`)).status).toBe(503);
    expect(lines.some((l) => l.includes('measurement engine failed'))).toBe(true);
    await daemon.stop();
  });
});
