/**
 * Contract drift in the running daemon (docs/drift.md): two environments of the real simulator
 * watched by `isa-monitor run` as a child process. The daemon learns its baselines from the
 * healthy simulator and keeps them beside the state file; the test then settles them (the hour of
 * learning is the tracker's, tested on a clock in tracker.test.ts), a drift fault changes the
 * sandbox only, and the daemon's /metrics and /api/status, the `drift` command's document and
 * the comparison across environments agree. `drift accept` clears exactly the operation it
 * names in the running daemon, and nothing comes back after a restart.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { DriftReport } from '../../src/drift/report.js';
import {
  eventually,
  metricSum,
  runCli,
  startDaemonProcess,
  type DaemonProcess,
} from '../support/cli.js';
import { writeDaemonConfig } from '../support/daemon-config.js';
import { API_KEY } from '../support/harness.js';
import { useTestSimulator } from '../support/simulator-hooks.js';
import { checksOffLines } from '../support/checks-off.js';
import { settleBaselines } from '../support/drift-baselines.js';

const sim = useTestSimulator();
const running: DaemonProcess[] = [];
const ENV = { ISA_PRODUCTION_API_KEY: API_KEY, ISA_SANDBOX_API_KEY: API_KEY };

afterEach(async () => {
  for (const daemon of running.splice(0)) {
    daemon.child.kill('SIGTERM');
    await daemon.exit;
  }
});

function environment(name: string): string {
  return `  - name: ${name}
    base_url: ${sim.url}/env/${name}
    api_key_env: ISA_${name.toUpperCase()}_API_KEY
    request_budget_per_second: 20
    ping: { interval: 1s, timeout: 500ms }
    providers: { interval: 1s, timeout: 900ms }
${checksOffLines(['ping', 'providers']).join('\n')}`;
}

async function config(): Promise<{ path: string; stateFile: string }> {
  const file = await writeDaemonConfig(sim.url);
  const text = await readFile(file.path, 'utf8');
  const head = text.slice(0, text.indexOf('environments:'));
  await writeFile(
    file.path,
    `${head}environments:\n${environment('production')}\n${environment('sandbox')}\n`,
  );
  return file;
}

async function start(path: string): Promise<{ daemon: DaemonProcess; url: string }> {
  const daemon = startDaemonProcess(['--config', path], ENV);
  running.push(daemon);
  return { daemon, url: await daemon.url };
}

async function stop(daemon: DaemonProcess): Promise<void> {
  running.splice(running.indexOf(daemon), 1);
  daemon.child.kill('SIGTERM');
  expect((await daemon.exit).code).toBe(0);
}

async function statusDrift(url: string): Promise<DriftReport | null> {
  const status = (await (await fetch(`${url}/api/status`)).json()) as {
    contract_drift: DriftReport | null;
  };
  return status.contract_drift;
}

async function cliDrift(path: string): Promise<DriftReport> {
  const run = await runCli(['drift', '--config', path, '--json'], { env: ENV });
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as DriftReport;
}

const counts = (report: DriftReport | null, environment: string, operation: string) =>
  report?.environments[environment]?.operations[operation]?.counts;

/**
 * The parts of the document that the file and memory share: everything but when it was made and
 * when each difference was last seen (the file is written when the document changes, and
 * otherwise once every 10 minutes).
 */
function comparable(report: DriftReport | null) {
  if (report === null) return null;
  const environments = Object.fromEntries(
    Object.entries(report.environments).map(([name, { bySeverity, operations }]) => [
      name,
      {
        bySeverity,
        operations: Object.fromEntries(
          Object.entries(operations).map(([operation, drift]) => [
            operation,
            {
              ...drift,
              differences: drift.differences.map(({ lastSeen: _, ...open }) => open),
            },
          ]),
        ),
      },
    ]),
  );
  return {
    environments,
    across: report.across.map(({ since: _, lasting: __, ...difference }) => difference),
  };
}

describe('contract drift in the daemon', () => {
  it('learns, reports a sandbox-only drift everywhere alike, accepts exactly one operation, and keeps it across a restart', async () => {
    const { path, stateFile } = await config();
    // Learning from the healthy simulator; the file is written at the latest at shutdown.
    const first = await start(path);
    await eventually(
      async () =>
        counts(await statusDrift(first.url), 'sandbox', 'service_providers') !== undefined &&
        counts(await statusDrift(first.url), 'production', 'ping') !== undefined,
      20_000,
      'both environments learning',
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${first.daemon.output().slice(-3000)}`);
    });
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    await stop(first.daemon);
    await settleBaselines(stateFile);

    // The sandbox changes: a new provider type (warning) and a new field in pings (info).
    sim.simulator.faults.add({
      environment: 'sandbox',
      endpoint: 'service_providers',
      fault: { kind: 'drift', change: 'new_value', path: 'providers[].type', value: 'reseller' },
    });
    sim.simulator.faults.add({
      environment: 'sandbox',
      endpoint: 'ping',
      fault: { kind: 'drift', change: 'add_field', field: 'region' },
    });
    const second = await start(path);
    await eventually(
      async () =>
        (await metricSum(
          second.url,
          /^isa_contract_drift_differences\{.*environment="sandbox",operation="service_providers",severity="warning"/,
        )) === 1 &&
        (await metricSum(
          second.url,
          /^isa_contract_drift_differences\{.*environment="sandbox",operation="ping",severity="info"/,
        )) === 1,
      20_000,
      'the sandbox drift on /metrics',
    );
    expect(
      await metricSum(second.url, /^isa_contract_drift_differences\{.*environment="production"/),
    ).toBe(0);
    // Shapes across environments: the field that only the sandbox sends, once it sent it enough.
    const withAcross = await eventually(
      async () => {
        const report = await statusDrift(second.url);
        return report?.across.some((d) => d.operation === 'ping' && d.subject === 'region')
          ? report
          : null;
      },
      20_000,
      'the ping field compared across environments',
    );
    expect(withAcross.across.find((d) => d.subject === 'region')?.has).toEqual({
      production: 'absent',
      sandbox: 'string',
    });
    const warning =
      withAcross.environments['sandbox']?.operations['service_providers']?.differences[0];
    expect(warning).toMatchObject({
      kind: 'new_value',
      path: 'providers[].type',
      severity: 'warning',
    });
    expect(withAcross.environments['sandbox']?.bySeverity.warning.count).toBe(1);

    // The command's document, from the file, agrees with the daemon's once the daemon wrote it.
    await eventually(
      async () =>
        JSON.stringify(comparable(await cliDrift(path))) ===
        JSON.stringify(comparable(await statusDrift(second.url))),
      15_000,
      'the drift command and /api/status agree',
    ).catch(async () => {
      expect(comparable(await cliDrift(path))).toEqual(comparable(await statusDrift(second.url)));
    });

    // Accepting the sandbox's provider list clears that operation alone, in the running daemon.
    const accepted = await runCli(
      [
        'drift',
        'accept',
        '--config',
        path,
        '--environment',
        'sandbox',
        '--operation',
        'service_providers',
      ],
      { env: ENV },
    );
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toMatch(
      /sandbox: accepted service_providers \(1 difference\(s\) cleared\) .* by \S+@\S+ \(ppid \d+\)/,
    );
    await eventually(
      async () =>
        counts(await statusDrift(second.url), 'sandbox', 'service_providers')?.warning === 0,
      15_000,
      'the daemon taking the accept',
    );
    expect(counts(await statusDrift(second.url), 'sandbox', 'ping')?.info).toBe(1);
    expect(second.daemon.output()).toContain('contract baseline accepted');

    // Nothing comes back after a restart, with the drift still in force.
    await stop(second.daemon);
    const third = await start(path);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const after = await statusDrift(third.url);
    expect(counts(after, 'sandbox', 'service_providers')).toEqual({
      breaking: 0,
      warning: 0,
      info: 0,
    });
    expect(counts(after, 'sandbox', 'ping')?.info).toBe(1);
    expect(after?.environments['sandbox']?.operations['service_providers']?.accepted?.by).toMatch(
      /@/,
    );
  }, 120_000);
});
