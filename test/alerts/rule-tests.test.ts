/**
 * The promtool rule tests: the committed files are exactly what the scenarios generate, promtool
 * passes them, every alert is seen both firing and not firing, and a wrong expectation fails.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import {
  REPO_ROOT,
  RULES_PATH,
  TESTS_DIR,
  generateAll,
  generateRuleTests,
} from '../../scripts/rules/gen-rule-tests.js';
import { CONTRACT_ALERTS, rulesText } from './rules-file.js';
import { runTool } from './tools.js';

interface TestFile {
  tests: Array<{
    name: string;
    alert_rule_test?: Array<{
      alertname: string;
      exp_alerts: Array<{ exp_labels: Record<string, string> }>;
    }>;
  }>;
}

const committedNames = (await readdir(join(REPO_ROOT, TESTS_DIR)))
  .filter((f) => f.endsWith('.yaml'))
  .sort();

describe('generated promtool tests', () => {
  it('are up to date with their scenarios and the rules (npm run generate)', async () => {
    const generated = await generateAll();
    expect([...generated.keys()].map((p) => p.slice(TESTS_DIR.length + 1)).sort()).toEqual(
      committedNames,
    );
    for (const [path, text] of generated) {
      const committed = await readFile(join(REPO_ROOT, path), 'utf8');
      expect(committed, `${path} is stale: run npm run generate`).toBe(text);
    }
    // The real recorder renders every scrape of every scenario: a few seconds alone, more when busy.
  }, 120_000);

  it('see every alert and severity firing, and every alert not firing', async () => {
    const fired = new Set<string>();
    const quiet = new Set<string>();
    for (const name of committedNames) {
      const file = YAML.parse(await readFile(join(REPO_ROOT, TESTS_DIR, name), 'utf8')) as TestFile;
      for (const test of file.tests) {
        for (const check of test.alert_rule_test ?? []) {
          if (check.exp_alerts.length === 0) quiet.add(check.alertname);
          for (const alert of check.exp_alerts)
            fired.add(`${check.alertname}/${alert.exp_labels['severity']}`);
        }
      }
    }
    const expectedFired = Object.entries(CONTRACT_ALERTS).flatMap(([name, list]) =>
      list.map((s) => `${name}/${s}`),
    );
    expect([...fired].sort()).toEqual(expectedFired.sort());
    expect([...quiet].sort()).toEqual(
      Object.keys(CONTRACT_ALERTS)
        .filter((n) => n !== 'Watchdog')
        .sort(),
    );
  });
});

/** A promtool test file as generated: its rule files, evaluation settings and test cases. */
interface PromtoolFile {
  rule_files: string[];
  tests: Array<{ name: string }>;
  [key: string]: unknown;
}

// One promtool process per test case, not per file: a whole file costs up to 18 s of CPU
// (latency.yaml, locations.yaml), several times that in wall time on two busy cores, while no
// single case costs more than about 6 s. Each case is written as a file of its own, with the same
// rule files and evaluation settings; promtool reads JSON as YAML, and the committed files are
// parsed as YAML 1.1, as promtool reads them.
const promtoolCases = (
  await Promise.all(
    committedNames.map(async (name) => {
      const text = await readFile(join(REPO_ROOT, TESTS_DIR, name), 'utf8');
      const file = YAML.parse(text, { version: '1.1' }) as PromtoolFile;
      const ruleFiles = file.rule_files.map((r) => resolve(REPO_ROOT, TESTS_DIR, r));
      return file.tests.map((test, index) => ({
        title: `${TESTS_DIR}/${name}, case ${index + 1} of ${file.tests.length}: ${test.name}`,
        file: `${name.replace(/\.yaml$/, '')}-${index + 1}.json`,
        text: JSON.stringify({ ...file, rule_files: ruleFiles, tests: [test] }),
      }));
    }),
  )
).flat();

// Concurrently: the two cores share the work.
describe.concurrent('promtool test rules', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'isa-rule-cases-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('have at least one case in every committed file', () => {
    expect(new Set(promtoolCases.map((c) => c.title.split(',')[0]))).toEqual(
      new Set(committedNames.map((name) => `${TESTS_DIR}/${name}`)),
    );
  });

  for (const testCase of promtoolCases) {
    it(`passes ${testCase.title}`, async () => {
      const path = join(dir, testCase.file);
      await writeFile(path, testCase.text);
      const result = await runTool('promtool', ['test', 'rules', path]);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.stdout).toContain('SUCCESS');
      // Most cases take a few seconds of CPU; the objectives' cases run days of history (the
      // 30-day one about 40 s alone, 80 s beside a loaded machine), so the bound is wide.
    }, 300_000);
  }
});

describe('a wrong expectation', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'isa-rule-tests-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('fails promtool: a burst of 4 slow pings claimed to page', async () => {
    const scenario = `
scenarios:
  - name: wrong on purpose
    environments:
      production: { ping: 10*ok 4*slow_critical }
    checks:
      - at: 16m15s
        alert: IsaApiLatencyHigh
        firing:
          - { environment: production, instance: null, pings: scheduled, severity: critical, value: 4 }
`;
    const path = join(dir, 'wrong.yaml');
    const text = await generateRuleTests(scenario, rulesText, {
      ruleFile: join(REPO_ROOT, RULES_PATH),
      source: path,
    });
    await writeFile(path, text);
    const result = await runTool('promtool', ['test', 'rules', path]);
    expect(result.code).not.toBe(0);
    expect(result.stderr + result.stdout).toMatch(
      /alertname: IsaApiLatencyHigh, time: 16m15s[\s\S]*got:\[\]/,
    );
  });
});
