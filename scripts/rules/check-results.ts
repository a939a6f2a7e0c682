/**
 * What a scenario's events mean to the monitor: each minute's event of a check's timeline becomes
 * the CheckResult a real run would have produced, handed to the daemon's real Recorder at the
 * moment the run finished. Each check's folder says that for its own timeline
 * (`src/checks/<name>/scenario-results.ts`, found through the registry); this module adds the
 * monitor's own events (maintenance windows, sessions, the ledger, the control probe) and the
 * environments' configuration. Everything after it (recording, rendering, encoding) reads what the
 * recorder wrote.
 *
 * Time model: the scenario starts at Unix time 0 (each check's module gives its runs' times).
 * Sessions open are set at the start of each minute.
 */
import { wholeNumber } from '../../src/checks/shared/scenario.js';
import {
  formatProblems,
  validateConfigDocument,
  type EnvironmentConfig,
} from '../../src/config/index.js';
import type { Recorder } from '../../src/metrics/recorder.js';
import { confirmEvents } from './confirm-sequence.js';
import { NO_EVENT, SCENARIO_RESULTS, expandTimeline, type EnvironmentSpec } from './scenarios.js';
import { CHECK_LIST } from '../../src/checks/index.js';

/** Something the daemon records at scenario second `at`. */
export interface RecordedEvent {
  at: number;
  record(recorder: Recorder): void;
}

/**
 * The configuration of the scenario's environments (thresholds, and each check's section as its
 * `scenario-results.ts` gives it), built by the daemon's own config validation so the
 * configuration gauges are what a config file would give.
 */
export function environmentConfigs(
  environments: Readonly<Record<string, EnvironmentSpec>>,
): EnvironmentConfig[] {
  const ms = (seconds: number) => `${Math.round(seconds * 1000)}ms`;
  const loaded = validateConfigDocument(
    {
      environments: Object.entries(environments).map(([name, spec]) => {
        const t = spec.thresholds;
        return {
          name,
          base_url: 'http://127.0.0.1:1',
          api_key_env: 'ISA_RULE_TEST_KEY',
          ...(t && {
            thresholds: {
              expected: ms(t.expected),
              warning: ms(t.warning),
              critical: ms(t.critical),
            },
          }),
          ...Object.fromEntries(
            SCENARIO_RESULTS.map(({ check, results }) => {
              const setting = checkSetting(name, check, results.options, spec);
              return [
                check,
                results.config?.(setting) ?? { enabled: setting.timeline !== undefined },
              ];
            }),
          ),
        };
      }),
    },
    { checks: CHECK_LIST, env: { ISA_RULE_TEST_KEY: 'rule-test-key' } },
  );
  if (!loaded.ok) throw new Error(`scenario environments: ${formatProblems(loaded.problems)}`);
  return loaded.config.environments;
}

/** What a check reads of a scenario environment: its timeline and the keys of its own. */
function checkSetting(
  environment: string,
  check: string,
  options: object | undefined,
  spec: EnvironmentSpec,
): { name: string; timeline: string | undefined; options: Record<string, unknown> } {
  const timeline = spec[check];
  return {
    name: environment,
    timeline: typeof timeline === 'string' ? timeline : undefined,
    options: Object.fromEntries(
      Object.keys(options ?? {})
        .filter((key) => spec[key] !== undefined)
        .map((key) => [key, spec[key]]),
    ),
  };
}

/** Every event of one environment's timelines, as the recorder would receive it. */
export function environmentEvents(
  environment: string,
  spec: EnvironmentSpec,
  minutes: number,
): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  // The daemon sets the gauge at a window's edges; a scenario's windows start and end on minutes.
  if (spec.maintenance !== undefined) {
    expandTimeline(spec.maintenance, minutes, '0').forEach((v, m) => {
      if (v !== '0' && v !== '1') throw new Error(`maintenance must be 1 or 0, got "${v}"`);
      events.push({ at: m * 60, record: (r) => r.setMaintenanceActive(environment, v === '1') });
    });
  }
  for (const { check, results } of SCENARIO_RESULTS) {
    events.push(
      ...results.events({
        ...checkSetting(environment, check, results.options, spec),
        minutes,
        thresholds: spec.thresholds,
        confirmSequence: confirmEvents,
      }),
    );
  }
  expandTimeline(spec.sessions ?? '', minutes, '0').forEach((v, m) => {
    const n = wholeNumber('sessions', v);
    events.push({ at: m * 60, record: (r) => r.setSessionsOpen(environment, n) });
  });
  if (spec.drift_warnings !== undefined) {
    expandTimeline(spec.drift_warnings, minutes, '0').forEach((v, m) => {
      const n = wholeNumber('drift_warnings', v);
      events.push({
        at: m * 60,
        record: (r) =>
          r.setContractDriftDifferences(environment, 'service_providers', 'warning', n),
      });
    });
  }
  expandTimeline(spec.unrecoverable ?? '', minutes, '0').forEach((v, m) => {
    const n = wholeNumber('unrecoverable', v);
    if (n > 0)
      events.push({ at: m * 60 + 50, record: (r) => r.recordUnrecoverable(environment, n) });
  });
  return events;
}

/** The control probe's results, one per minute at m:30: 1 (ok), 0 (a timeout) or `-`. */
export function controlEvents(control: string | undefined, minutes: number): RecordedEvent[] {
  if (control === undefined) return [];
  return expandTimeline(control, minutes, NO_EVENT).flatMap((v, m) => {
    if (v === NO_EVENT) return [];
    if (v !== '0' && v !== '1') throw new Error(`control must be 1, 0 or -, got "${v}"`);
    const at = m * 60 + 30;
    return [
      {
        at,
        record: (r: Recorder) =>
          v === '1' ? r.recordControlProbe('ok', 50) : r.recordControlProbe('timeout', 5000),
      },
    ];
  });
}

/** The monitor-wide events of a scenario: the session ledger's writability per minute. */
export function monitorEvents(ledger: string | undefined, minutes: number): RecordedEvent[] {
  return expandTimeline(ledger ?? '', minutes, '1').map((v, m) => {
    if (v !== '0' && v !== '1') throw new Error(`ledger must be 1 or 0, got "${v}"`);
    return { at: m * 60, record: (r: Recorder) => r.setLedgerWritable(v === '1') };
  });
}
