/**
 * Renders the Kubernetes objects that are generated from the repository's own sources, so the
 * Prometheus Operator and Grafana's dashboard sidecar load exactly the shipped rules and
 * dashboards:
 *
 * - deploy/kubernetes/base/prometheusrule.yaml from alerts/isa-monitor.rules.yaml;
 * - deploy/kubernetes/base/dashboards-configmap.yaml from dashboards/*.json.
 *
 * Pure: reads the sources (or takes them in memory), returns the file texts. scripts/generate.ts
 * writes them; test/deploy/generated.test.ts fails when a committed file differs from what this
 * returns.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const KUSTOMIZE_BASE = path.join(REPO_ROOT, 'deploy/kubernetes/base');
export const RULES_FILE = path.join(REPO_ROOT, 'alerts/isa-monitor.rules.yaml');
export const DASHBOARDS_DIR = path.join(REPO_ROOT, 'dashboards');

/** The command that rewrites every generated deployment file. */
export const REGENERATE_COMMAND = 'npm run generate';

/** Labels every object of the base carries (the Service's selector uses the first two). */
export const COMMON_LABELS = {
  'app.kubernetes.io/name': 'isa-monitor',
  'app.kubernetes.io/component': 'monitor',
} as const;

/**
 * Grafana's dashboard sidecar (kiwigrid/k8s-sidecar, as in the Grafana Helm chart and
 * kube-prometheus-stack) loads every ConfigMap carrying this label; the annotation names the
 * folder when the sidecar's folderAnnotation is set to it (the chart's default name).
 */
export const GRAFANA_DASHBOARD_LABEL = { grafana_dashboard: '1' } as const;
export const GRAFANA_FOLDER_ANNOTATION = { grafana_folder: 'isa-monitor' } as const;

export interface GeneratedFile {
  /** Path relative to the repository root. */
  file: string;
  text: string;
}

function header(sources: string): string {
  return [
    `# GENERATED from ${sources} by ${REGENERATE_COMMAND}: do not edit.`,
    '# A test fails when this file differs from what the generator produces.',
    '',
  ].join('\n');
}

function toYaml(doc: unknown): string {
  // lineWidth 0: never fold long PromQL or JSON lines; block literals keep them readable.
  return stringify(doc, { lineWidth: 0, blockQuote: 'literal' });
}

/**
 * The sources the objects are made from. Absent ones are read from the committed files;
 * scripts/generate.ts passes the texts it has just generated, so one run is consistent.
 */
export interface DeploySources {
  /** The text of alerts/isa-monitor.rules.yaml. */
  rulesText?: string;
  /** The dashboards/*.json files: name under dashboards/ and text. */
  dashboards?: ReadonlyArray<{ file: string; text: string }>;
}

/** The PrometheusRule whose spec.groups are the rules file's groups, unchanged. */
export async function renderPrometheusRule(sources: DeploySources = {}): Promise<GeneratedFile> {
  const rules = parse(sources.rulesText ?? (await readFile(RULES_FILE, 'utf8'))) as {
    groups: unknown[];
  };
  const doc = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'isa-monitor', labels: { ...COMMON_LABELS } },
    spec: { groups: rules.groups },
  };
  return {
    file: 'deploy/kubernetes/base/prometheusrule.yaml',
    text: header('alerts/isa-monitor.rules.yaml') + toYaml(doc),
  };
}

/** One ConfigMap holding every dashboards/*.json, labelled for Grafana's sidecar. */
export async function renderDashboardsConfigMap(
  sources: DeploySources = {},
): Promise<GeneratedFile> {
  const dashboards =
    sources.dashboards ??
    (await Promise.all(
      (await readdir(DASHBOARDS_DIR))
        .filter((f) => f.endsWith('.json'))
        .map(async (file) => ({
          file,
          text: await readFile(path.join(DASHBOARDS_DIR, file), 'utf8'),
        })),
    ));
  const data: Record<string, string> = {};
  for (const { file, text } of [...dashboards].sort((a, b) => (a.file < b.file ? -1 : 1)))
    data[file] = text;
  const doc = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'isa-monitor-dashboards',
      labels: { ...COMMON_LABELS, ...GRAFANA_DASHBOARD_LABEL },
      annotations: { ...GRAFANA_FOLDER_ANNOTATION },
    },
    data,
  };
  return {
    file: 'deploy/kubernetes/base/dashboards-configmap.yaml',
    text: header('dashboards/*.json') + toYaml(doc),
  };
}

/** Every generated deployment file, from `sources` or the committed rules and dashboards. */
export async function renderAll(sources: DeploySources = {}): Promise<GeneratedFile[]> {
  return [await renderPrometheusRule(sources), await renderDashboardsConfigMap(sources)];
}
