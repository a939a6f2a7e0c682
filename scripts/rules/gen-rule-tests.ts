/**
 * Generates promtool rule tests (`alerts/tests/*.yaml`) from per-minute scenarios: the monitor's
 * (`alerts/tests/scenarios/*.yaml`) and each check's (`src/checks/<name>/scenarios/*.yaml`).
 *
 * Writing counters by hand at 15 s resolution is error-prone: one ping a minute means four samples
 * per ping, and a histogram's buckets, count and sum must move together. A scenario instead says
 * what happened each minute (`10*ok 5*slow_critical`). The generator turns each event into the
 * check result a real run would produce (`check-results.ts`), feeds it to the daemon's real
 * recorder on a fake clock and scrapes the exposition it renders (`recorded-series.ts`), writes
 * those scrapes in promtool's notation (`series-encoding.ts`), and states the expected alerts with
 * annotations rendered by promtool itself (`expected-alerts.ts`). This file writes the test files.
 *
 * `npm run generate` (scripts/generate.ts) writes the files, with every other generated file;
 * `npm run generate -- --check` only reports the files that differ (exit 1).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import YAML from 'yaml';
import { CHECK_LIST } from '../../src/checks/index.js';
import type { AnyCheck } from '../../src/kernel/check.js';
import { formatDuration, parseDuration } from './durations.js';
import {
  alertRules,
  expectedAlert,
  groupNames,
  renderAnnotations,
  type ExpectedAlert,
} from './expected-alerts.js';
import { namesReadByRules, recordSeries } from './recorded-series.js';
import { isAlertCheck, parseScenarioFile, type AlertCheck, type QueryCheck } from './scenarios.js';
import { expandingNotation, seriesSelector } from './series-encoding.js';

/** The repository root, from this file's location. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const RULES_PATH = 'alerts/isa-monitor.rules.yaml';
export const SCENARIO_DIR = 'alerts/tests/scenarios';
export const TESTS_DIR = 'alerts/tests';

// ---------------------------------------------------------------------------------------------
// Test files

export interface GenerateOptions {
  /** Path of the rules file relative to the generated test file (promtool resolves it so). */
  ruleFile: string;
  /** Path of the scenario file, for the header. */
  source: string;
}

/**
 * Turns one scenario file into the text of one promtool test file, formatted by Prettier with the
 * repository's settings so `prettier --check` and the generator agree.
 */
export async function generateRuleTests(
  scenarioText: string,
  rulesText: string,
  options: GenerateOptions,
): Promise<string> {
  const file = parseScenarioFile(scenarioText, options.source);
  const scrapeMs = parseDuration(file.scrape_interval);
  const rules = alertRules(rulesText);
  const readByRules = namesReadByRules(rulesText);
  const keep = (name: string) => readByRules.has(name);

  // Every expected alert of the file first, so one promtool run renders all their annotations.
  const expected: ExpectedAlert[] = [];
  const alertChecks = file.scenarios.map((scenario) =>
    scenario.checks.filter(isAlertCheck).map((c) => ({
      check: c,
      alerts: c.firing.map((entry) => {
        expected.push(expectedAlert(c, entry, rules, file.target));
        return expected.length - 1;
      }),
    })),
  );
  const annotations = await renderAnnotations(expected);
  const expAlert = (i: number) => ({
    exp_labels: sortKeys((expected[i] as ExpectedAlert).labels),
    exp_annotations: sortKeys(annotations[i] ?? {}),
  });

  const tests = [];
  for (const [i, scenario] of file.scenarios.entries()) {
    const series = await recordSeries(scenario, scrapeMs / 1000, file.target, keep);
    const alerts = alertChecks[i] ?? [];
    const queryChecks = scenario.checks.filter((c): c is QueryCheck => !isAlertCheck(c));
    tests.push({
      name: scenario.name,
      interval: formatDuration(scrapeMs),
      input_series: series.map((s) => ({
        series: seriesSelector(s.metric, s.labels),
        values: expandingNotation(s.values),
      })),
      ...(alerts.length > 0 && {
        alert_rule_test: alerts.map(
          ({ check, alerts: indices }: { check: AlertCheck; alerts: number[] }) => ({
            eval_time: formatDuration(parseDuration(check.at)),
            alertname: check.alert,
            exp_alerts: indices.map(expAlert),
          }),
        ),
      }),
      ...(queryChecks.length > 0 && {
        promql_expr_test: queryChecks.map((c) => ({
          expr: c.query,
          eval_time: formatDuration(parseDuration(c.at)),
          exp_samples: c.samples,
        })),
      }),
    });
  }
  const doc = new YAML.Document({
    rule_files: [options.ruleFile],
    evaluation_interval: formatDuration(parseDuration(file.evaluation_interval)),
    // promtool evaluates groups in random order unless told; Prometheus runs them concurrently.
    // File order makes the tests deterministic.
    group_eval_order: groupNames(rulesText),
    tests,
  });
  // Carry each check's reason into the generated file, where a failing test is read.
  file.scenarios.forEach((scenario, i) => {
    for (const kind of ['alert_rule_test', 'promql_expr_test'] as const) {
      const checks = scenario.checks.filter((c) =>
        kind === 'alert_rule_test' ? isAlertCheck(c) : !isAlertCheck(c),
      );
      checks.forEach((c, j) => {
        const node = doc.getIn(['tests', i, kind, j], true);
        if (c.why && YAML.isNode(node)) node.commentBefore = ` ${c.why}`;
      });
    }
  });
  doc.commentBefore =
    ` Generated by scripts/rules/gen-rule-tests.ts from ${options.source}; do not edit.\n` +
    ' Regenerate: npm run generate\n' +
    ` Run: promtool test rules ${TESTS_DIR}/*.yaml`;
  const config = await prettier.resolveConfig(join(REPO_ROOT, TESTS_DIR, 'generated.yaml'));
  return prettier.format(doc.toString({ lineWidth: 0 }), { ...config, parser: 'yaml' });
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Every scenario file, repository-relative: the monitor's (`alerts/tests/scenarios/`), then each
 * registered check's (`src/checks/<name>/scenarios/`) in registry order. Each becomes the test file
 * of the same name in `alerts/tests/`, so names must be unique.
 */
export function scenarioFiles(root: string = REPO_ROOT): string[] {
  const dirs = [
    SCENARIO_DIR,
    ...(CHECK_LIST as readonly AnyCheck[]).map((check) => checkScenarioDir(check.name)),
  ];
  const files = dirs.flatMap((dir) =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir))
          .filter((f) => f.endsWith('.yaml'))
          .sort()
          .map((f) => join(dir, f))
      : [],
  );
  const seen = new Map<string, string>();
  for (const file of files) {
    const other = seen.get(basename(file));
    if (other) throw new Error(`scenario files ${other} and ${file} would write one test file`);
    seen.set(basename(file), file);
  }
  return files;
}

/** Where the check called `name` keeps its rule-test scenarios. */
export function checkScenarioDir(name: string): string {
  return `src/checks/${name}/scenarios`;
}

/**
 * The test file generated from every scenario file, keyed by repository-relative path. The rules
 * are the committed file's unless `rulesText` is given (scripts/generate.ts passes the rules it
 * has just assembled).
 */
export async function generateAll(
  root: string = REPO_ROOT,
  rulesText: string = readFileSync(join(root, RULES_PATH), 'utf8'),
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const source of scenarioFiles(root)) {
    const target = join(TESTS_DIR, basename(source));
    const text = await generateRuleTests(readFileSync(join(root, source), 'utf8'), rulesText, {
      ruleFile: relative(dirname(target), RULES_PATH),
      source,
    });
    out.set(target, text);
  }
  return out;
}
