/**
 * Series exist only for enabled checks (docs/metrics.md, "What exists from start-up"): a daemon
 * whose environment runs only `ping` exports at most 50 samples for it, counted on a real
 * `/metrics` scrape after a ping has run (so the "last event" gauges are there too).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { eventually } from '../support/cli.js';
import { startDaemonFromYaml } from '../support/daemon.js';
import { CHECK_NAMES } from '../../src/checks/index.js';

const KEY = 'samples-key-0123456789abcdef';
/**
 * What an environment with only `ping` enabled exports (docs/metrics.md, "What exists from
 * start-up"; an IP-literal `base_url`, as here, has no resolve phase; the ping histogram has 7 finite bounds at
 * the default thresholds and timeout; `isa_check_runs_total` and `isa_check_duration_seconds` have
 * no ping series, which would repeat its attempts and duration; `isa_check_runs_abandoned_total`
 * has one, 0 in a healthy monitor; the environment's `isa_maintenance_active`; and, once the
 * ping answered, its three `isa_contract_drift_differences` series, one per severity).
 */
const PING_ONLY_LIMIT = 53;
/**
 * What confirmation pings add where they are on (the default at 60 s pings): 4 results of
 * `isa_ping_confirm_attempts_total` (those the rules read; the others appear when first seen),
 * 4 samples of `isa_ping_confirm_duration_seconds` (the bucket of the default critical
 * threshold, 1 s, then +Inf, sum, count), 3 ends of `isa_ping_confirm_sequences_total` and
 * `isa_ping_confirm_active`. Documented in docs/metrics.md.
 */
const CONFIRM_SAMPLES = 12;

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [KEY] });
});
afterAll(() => sim.close());

/** An environment section that enables only ping (the other checks are on by default). */
const OTHER_CHECKS = CHECK_NAMES.filter((name) => name !== 'ping');
const PING_ONLY = [
  'ping: { interval: 1s, timeout: 500ms }',
  ...OTHER_CHECKS.map((name) => `${name}: { enabled: false }`),
].join('\n');

/**
 * Starts an in-process daemon with one environment per `sections` entry; returns it running. The
 * simulator's URL is an IP literal (127.0.0.1) unless `host` names the host to reach it by;
 * `ledger` is the session ledger (state file) a previous process left.
 */
async function daemonWith(
  sections: Record<string, string>,
  opts: { host?: string; ledger?: object } = {},
): Promise<Daemon> {
  const base = opts.host === undefined ? sim.url : sim.url.replace('127.0.0.1', opts.host);
  const dir = await mkdtemp(join(tmpdir(), 'isa-samples-'));
  if (opts.ledger) await writeFile(join(dir, 'sessions.json'), JSON.stringify(opts.ledger));
  const yaml = [
    'listen: { host: 127.0.0.1, port: 0 }',
    `state_file: ${join(dir, 'sessions.json')}`,
    'environments:',
    ...Object.entries(sections).flatMap(([name, lines]) => [
      `  - name: ${name}`,
      `    base_url: ${base}/env/${name}`,
      '    api_key_env: SAMPLES_KEY',
      ...lines.split('\n').map((line) => `    ${line}`),
    ]),
  ].join('\n');
  return startDaemonFromYaml(yaml, { SAMPLES_KEY: KEY }, dir);
}

/** The samples of `/metrics` that carry `environment="<name>"`. */
function samplesOf(exposition: string, environment: string): string[] {
  return exposition
    .split('\n')
    .filter((line) => !line.startsWith('#') && line.includes(`environment="${environment}"`));
}

async function scrapeAfterPing(daemon: Daemon, environment: string): Promise<string> {
  return eventually(
    async () => {
      const text = await (await fetch(`${daemon.url}/metrics`)).text();
      return text.includes(`isa_ping_up{environment="${environment}"}`) ? text : undefined;
    },
    10_000,
    'a first ping',
  );
}

describe('series of enabled checks only', () => {
  it(`exports at most ${PING_ONLY_LIMIT} samples for an environment that runs only ping`, async () => {
    const daemon = await daemonWith({
      pingonly: PING_ONLY,
    });
    try {
      const samples = samplesOf(await scrapeAfterPing(daemon, 'pingonly'), 'pingonly');
      expect(samples.length).toBeGreaterThan(0);
      expect(samples.length).toBeLessThanOrEqual(PING_ONLY_LIMIT);
      // Nothing of the disabled check, not even its share of the universal metrics.
      const others = OTHER_CHECKS.join('|');
      const theirs = new RegExp(`^isa_(${others}|qualify)_`);
      expect(samples.filter((s) => theirs.test(s))).toEqual([]);
      expect(samples.filter((s) => new RegExp(`check="(${others})"`).test(s))).toEqual([]);
      expect(samples.filter((s) => /operation="(?!ping")/.test(s))).toEqual([]);
      // No contract checks: a ping's body is judged by its own result (invalid_body).
      expect(samples.filter((s) => s.startsWith('isa_contract_checks_total'))).toEqual([]);
    } finally {
      await daemon.stop();
    }
  });

  it(`adds exactly ${CONFIRM_SAMPLES} samples where confirmation pings are on`, async () => {
    const daemon = await daemonWith({
      // At 1 s pings confirmation (10 s by default) is off; at 2 s pings, 1 s confirmation is on.
      pingonly: PING_ONLY,
      confirming: PING_ONLY.replace(
        'ping: { interval: 1s, timeout: 500ms }',
        'ping: { interval: 2s, timeout: 500ms, confirm: { interval: 1s } }',
      ),
    });
    try {
      await scrapeAfterPing(daemon, 'pingonly');
      const text = await scrapeAfterPing(daemon, 'confirming');
      const confirming = samplesOf(text, 'confirming');
      expect(samplesOf(text, 'pingonly').filter((s) => s.includes('_confirm_'))).toEqual([]);
      expect(confirming.filter((s) => s.includes('_confirm_'))).toHaveLength(CONFIRM_SAMPLES);
      expect(confirming.length - samplesOf(text, 'pingonly').length).toBe(CONFIRM_SAMPLES);
      expect(confirming).toContain('isa_ping_confirm_active{environment="confirming"} 0');
    } finally {
      await daemon.stop();
    }
  });

  it('exports the resolve phase only where a host name is resolved, and records it there', async () => {
    const literal = await daemonWith({ literal: PING_ONLY });
    const named = await daemonWith({ named: PING_ONLY }, { host: 'localhost' });
    try {
      const phase = (env: string) => `isa_ping_phase_duration_seconds_count{environment="${env}",`;
      const literalSamples = samplesOf(await scrapeAfterPing(literal, 'literal'), 'literal');
      expect(literalSamples.filter((s) => s.startsWith(phase('literal')))).toHaveLength(4);
      expect(literalSamples.filter((s) => s.includes('phase="resolve"'))).toEqual([]);
      const namedSamples = samplesOf(await scrapeAfterPing(named, 'named'), 'named');
      // A new connection per ping (the default): its name was looked up, and that was timed.
      const resolved = namedSamples.find((s) => s.startsWith(`${phase('named')}phase="resolve"}`));
      expect(Number(resolved?.split(' ')[1])).toBeGreaterThanOrEqual(1);
    } finally {
      await Promise.all([literal.stop(), named.stop()]);
    }
  });

  it('exports the session families only where sessions are created, or the ledger still holds some', async () => {
    // A session and a create intent that a process since gone (no owner) left in `formerly`, an
    // environment that ran lifecycle then and runs only ping now.
    const created = await fetch(`${sim.url}/env/formerly/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ street1: '1 Instant Way', zip: '80202', campaign_id: 'samples' }),
    });
    const token = created.headers.get('session_token') ?? '';
    expect(created.status).toBe(201);
    const leftover = { environment: 'formerly', createdAt: Date.now(), owner: null };
    const daemon = await daemonWith(
      {
        pingonly: PING_ONLY,
        // Room in its request budget beside a ping every second, for the close.
        formerly: `${PING_ONLY}\nrequest_budget_per_second: 10`,
        both: [
          'ping: { interval: 1s, timeout: 500ms }',
          'lifecycle:',
          '  interval: 1h',
          '  addresses: [{ street1: "1 Instant Way", zip: "80202" }]',
        ].join('\n'),
      },
      {
        ledger: {
          version: 2,
          sessions: [{ ...leftover, token }],
          intents: [
            { ...leftover, id: 'gone-1', correlationId: 'c-1', campaignId: 'samples', address: {} },
          ],
        },
      },
    );
    try {
      // Ready: the engine has reported the ledger, so the series are there at the first scrape.
      const first = await (await fetch(`${daemon.url}/metrics`)).text();
      const sessionSeries = (env: string, text: string) =>
        samplesOf(text, env).filter((s) => s.startsWith('isa_synthetic_sessions_'));
      const families = (env: string, text: string) =>
        sessionSeries(env, text).map((s) => s.split('{')[0]);
      const both = ['isa_synthetic_sessions_open', 'isa_synthetic_sessions_unrecoverable_total'];
      expect(sessionSeries('pingonly', first)).toEqual([]);
      expect(families('both', first)).toEqual(both);
      expect(families('formerly', first)).toEqual(both);
      // The daemon closes the leftover session and reports the intent nobody can close.
      await eventually(
        () => sim.state.sessions().find((s) => s.token === token)?.status === 'closed' || undefined,
        10_000,
        'the leftover session to be closed',
      );
      const text = await eventually(
        async () => {
          const t = await (await fetch(`${daemon.url}/metrics`)).text();
          return t.includes('isa_synthetic_sessions_open{environment="formerly"} 0')
            ? t
            : undefined;
        },
        10_000,
        'the open count to return to 0',
      );
      expect(sessionSeries('formerly', text)).toContain(
        'isa_synthetic_sessions_unrecoverable_total{environment="formerly"} 1',
      );
      expect(sessionSeries('pingonly', text)).toEqual([]);
    } finally {
      await daemon.stop();
    }
  });

  it('zero-initialises the series of an enabled check beside a ping-only environment', async () => {
    const daemon = await daemonWith({
      pingonly: PING_ONLY,
      both: [
        'ping: { interval: 1s, timeout: 500ms }',
        'lifecycle:',
        '  interval: 1h',
        '  addresses: [{ street1: "2 Pending Ave", zip: "80202" }]',
      ].join('\n'),
    });
    try {
      const text = await scrapeAfterPing(daemon, 'both');
      const both = samplesOf(text, 'both');
      expect(both).toContain('isa_lifecycle_runs_total{environment="both",result="error"} 0');
      expect(both).toContain(
        'isa_check_runs_total{environment="both",check="lifecycle",outcome="fail"} 0',
      );
      expect(samplesOf(text, 'pingonly').length).toBeLessThan(both.length);
    } finally {
      await daemon.stop();
    }
  });
});
