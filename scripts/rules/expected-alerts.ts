/**
 * The alerts a scenario expects, as promtool's `exp_alerts`: the full label set of the one rule
 * the expectation picks, and its annotations rendered by Prometheus itself.
 *
 * Annotations are not rendered here. For every expectation, promtool evaluates a probe rule that
 * carries the real rule's annotation templates over a series with the expectation's labels and
 * `value`; the text it renders becomes `exp_annotations`. promtool then compares that with what
 * the real rule renders from the real series, so a template, a label or a value that differs
 * fails the rule test, and no copy of Go's formatting exists to drift from Prometheus.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import type { AlertCheck, FiringEntry, Target } from './scenarios.js';

export interface AlertRule {
  alert: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** The alerting rules of a rules file. */
export function alertRules(rulesText: string): AlertRule[] {
  const doc = YAML.parse(rulesText) as {
    groups?: Array<{ rules?: Array<Partial<AlertRule> & { record?: string }> }>;
  };
  const rules: AlertRule[] = [];
  for (const group of doc.groups ?? []) {
    for (const rule of group.rules ?? []) {
      if (typeof rule.alert !== 'string') continue;
      rules.push({
        alert: rule.alert,
        labels: rule.labels ?? {},
        annotations: rule.annotations ?? {},
      });
    }
  }
  return rules;
}

/** The rule groups of a rules file, in file order. */
export function groupNames(rulesText: string): string[] {
  const doc = YAML.parse(rulesText) as { groups?: Array<{ name?: string }> };
  return (doc.groups ?? []).map((g) => String(g.name));
}

/** One expected alert before its annotations are rendered. */
export interface ExpectedAlert {
  rule: AlertRule;
  /** The alert's labels: the expression's output labels plus the rule's own. */
  labels: Record<string, string>;
  /** The expression's output labels: what `$labels` holds in the rule's templates. */
  exprLabels: Record<string, string>;
  value: number | undefined;
}

/** Resolves one `firing` entry to the one rule it names and the alert's full label set. */
export function expectedAlert(
  check: AlertCheck,
  entry: FiringEntry,
  rules: readonly AlertRule[],
  target: Readonly<Target>,
): ExpectedAlert {
  const { value, ...given } = entry;
  const labels: Record<string, string> = { ...target };
  for (const [name, v] of Object.entries(given)) {
    if (v === null) delete labels[name];
    else if (typeof v === 'string') labels[name] = v;
  }
  const candidates = rules.filter(
    (r) =>
      r.alert === check.alert &&
      Object.entries(r.labels).every(([k, v]) => labels[k] === undefined || labels[k] === v),
  );
  if (candidates.length !== 1) {
    throw new Error(
      `alert ${check.alert} at ${check.at}: ${candidates.length} rules match ${JSON.stringify(labels)}; give labels that pick exactly one`,
    );
  }
  const rule = candidates[0] as AlertRule;
  const usesValue = Object.values(rule.annotations).some((t) => t.includes('$value'));
  if (usesValue && value === undefined) {
    throw new Error(`alert ${check.alert} at ${check.at}: its annotations need the alert's value`);
  }
  const exprLabels = Object.fromEntries(
    Object.entries(labels).filter(([k]) => !(k in rule.labels)),
  );
  return { rule, labels: { ...labels, ...rule.labels }, exprLabels, value };
}

const PROBE_METRIC = 'isa_annotation_probe';

/**
 * Each expectation's annotations as Prometheus renders them for its labels and value, from one
 * promtool run. The probe tests expect no alert on purpose: promtool then prints what fired.
 */
export async function renderAnnotations(
  expected: readonly ExpectedAlert[],
): Promise<Array<Record<string, string>>> {
  if (expected.length === 0) return [];
  const rules = {
    groups: [
      {
        name: 'annotation-probes',
        rules: expected.map((e, i) => ({
          alert: `Probe${i}`,
          expr: `sum without (probe) (${PROBE_METRIC}{probe="${i}"})`,
          annotations: e.rule.annotations,
        })),
      },
    ],
  };
  const tests = {
    rule_files: ['probes.rules.yaml'],
    evaluation_interval: '1m',
    tests: [
      {
        interval: '1m',
        input_series: expected.map((e, i) => ({
          series: `${PROBE_METRIC}{${Object.entries({ ...e.exprLabels, probe: String(i) })
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(',')}}`,
          values: String(e.value ?? 0),
        })),
        alert_rule_test: expected.map((_e, i) => ({
          eval_time: '0m',
          alertname: `Probe${i}`,
          exp_alerts: [],
        })),
      },
    ],
  };
  const dir = await mkdtemp(join(tmpdir(), 'isa-annotations-'));
  try {
    await writeFile(join(dir, 'probes.rules.yaml'), YAML.stringify(rules));
    await writeFile(join(dir, 'probes.test.yaml'), YAML.stringify(tests));
    const output = await promtool(['test', 'rules', 'probes.test.yaml'], dir);
    return expected.map((_e, i) => probeAnnotations(output, `Probe${i}`));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The annotations promtool printed for the one alert the probe `alertname` fired. */
function probeAnnotations(output: string, alertname: string): Record<string, string> {
  const start = output.indexOf(`alertname: ${alertname}, `);
  if (start < 0) throw new Error(`promtool rendered nothing for ${alertname}:\n${output}`);
  const block = output.slice(start).split(/\n\s*alertname: /)[0] ?? '';
  const lines = [...block.matchAll(/Annotations:\{(.*)\}$/gm)];
  if (lines.length !== 1) throw new Error(`expected one ${alertname} alert in:\n${block}`);
  const annotations: Record<string, string> = {};
  // promtool prints each value Go-quoted; JSON reads the escapes Go uses for this text.
  for (const [, name, quoted] of (lines[0]?.[1] ?? '').matchAll(
    /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g,
  )) {
    annotations[name ?? ''] = JSON.parse(`"${quoted}"`) as string;
  }
  return annotations;
}

function promtool(args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('promtool', args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') {
        reject(
          new Error(
            `promtool could not run (${err.message}); install it: apt-get install prometheus`,
          ),
        );
        return;
      }
      resolve(stdout + stderr);
    });
  });
}
