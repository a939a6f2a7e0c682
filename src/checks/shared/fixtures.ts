/**
 * What the check folders' test fixtures share (each `src/checks/<name>/fixtures.ts`): results a
 * run could produce, built by hand, for the tests that need every registered check's (the golden
 * metric set, promtool's check of /metrics; docs/architecture.md, "Adding a check"). Nothing the
 * daemon runs imports them.
 */
import type { CheckResult, StepRecord } from '../../kernel/check.js';
import type { CheckConfigBase } from '../../kernel/section.js';

/** 2024-05-01T12:00:00Z */
export const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

/** Where and when a fixture's run happened: production at T0 unless given. */
export interface FixtureOptions {
  environment?: string;
  startedAt?: number;
}

/**
 * A check's fixtures: `sampleResults` are results of one environment that, recorded together,
 * give each of the check's own metric families at least one sample; `config` is its section as
 * the configuration tests and the test environments use it.
 */
export interface CheckFixtures {
  sampleResults(environment: string): CheckResult[];
  config: ConfigFixtures;
  /**
   * A check whose run is stateless reads: the requests of one run, each with its operation, as
   * the check sends them. The drift tests and benchmark (test/drift/healthy-week.test.ts,
   * bench/drift.ts) replay them at the check's default interval; the checks whose runs carry
   * state (lifecycle, analytics) are played there in full.
   */
  driftReads?: readonly DriftRead[];
}

/** One request of a run: its `operation` label and its path with the query, from the base URL. */
export interface DriftRead {
  operation: string;
  path: string;
}

/** A section in the file's spelling (`environments[].<check name>`). */
export type FileSection = Readonly<Record<string, unknown>>;

/** A check's config: the uniform settings and its own. */
export type SectionConfig = CheckConfigBase & Readonly<Record<string, unknown>>;

/**
 * A check's section in the tests, so that none of them names the checks one by one: the config
 * loader's tests (test/config/load.test.ts), the in-process test environment
 * (test/support/harness.ts) and the end-to-end test (test/e2e/page.test.ts) take every registered
 * check's from here.
 */
export interface ConfigFixtures {
  /** What a file must set in the section for the check to load with every other key at its default. */
  minimal?: FileSection;
  /**
   * The check's config from a file with only `minimal` in the section, on an `https` base URL:
   * each default as docs/configuration.md states it, written out, so a changed default fails.
   */
  defaults: SectionConfig;
  /** A section that sets the check's keys, and the check's config it gives. */
  configured: { file: FileSection; config: SectionConfig };
  /**
   * The check's config in the in-process test environment, over its section as a file with
   * `enabled: false` gives it (test/support/harness.ts): a check the tests run on every
   * environment is enabled here, with intervals and timeouts short enough for a test.
   */
  test?: Readonly<Record<string, unknown>>;
  /**
   * The section in the end-to-end test's file, whose clock `scaled` compresses (real ms → ms): the
   * check must run often enough there for each of its dashboard panels to have data
   * (docs/dashboards.md).
   */
  endToEnd(scaled: (realMs: number) => number): FileSection;
}

export function step(partial: Partial<StepRecord> & { name: string }): StepRecord {
  return {
    method: 'GET',
    path: null,
    statusCode: 200,
    durationMs: 10,
    requestId: null,
    error: null,
    ...partial,
  };
}

/** A passing run of a check that makes one request per step, as `<check>` Results share it. */
export function passingRun<Facts>(
  check: string,
  facts: Facts,
  steps: Array<{
    name: string;
    path: string;
    operation: CheckResult['responses'][number]['operation'];
  }>,
  opts: FixtureOptions,
): CheckResult<Facts> {
  return {
    check,
    environment: opts.environment ?? 'production',
    outcome: 'pass',
    reason: null,
    summary: {},
    startedAt: opts.startedAt ?? T0,
    durationMs: 50 * steps.length,
    steps: steps.map((s) => step({ name: s.name, path: s.path, durationMs: 50 })),
    facts,
    responses: steps.map((s) => ({ operation: s.operation, code: '200' })),
    contractChecks: [{ check: 'response_schema', result: 'pass' }],
  };
}
