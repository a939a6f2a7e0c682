/**
 * Objectives' specs as Sloth reads them (docs/alerts.md, "Objectives"; docs/cli.md,
 * "validate-slo"): Sloth's `prometheus/v1` format and its Kubernetes form
 * (`PrometheusServiceLevel`, `sloth.slok.dev/v1`), several YAML documents per file, `events` and
 * `raw` SLIs, every alerting key, and Sloth's validation rules. The rules' generator, `report` and
 * `validate-slo` read specs here, so all three accept and refuse the same files. Every problem
 * names its document and key.
 */
import { parseAllDocuments } from 'yaml';
import { formatKeyPath } from '../config/problems.js';
import {
  asRecord,
  checkAlert,
  checkLabels,
  checkName,
  checkPlugins,
  checkQuery,
  type Checker,
  type Node,
} from './sloth-validation.js';

export const SLO_SPEC_PATH = 'slo/isa-monitor.sloth.yaml';

/** How an objective's SLI is counted: bad events over all events, or a ready error ratio. */
export type Sli =
  | { kind: 'events'; errorQuery: string; totalQuery: string }
  | { kind: 'raw'; errorRatioQuery: string };

/** One alert of an objective (read; the report does not use alerts). */
export interface AlertSpec {
  disable: boolean;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** One objective of a spec. */
export interface Objective {
  name: string;
  /** Percent, e.g. 99.5. */
  objective: number;
  description: string;
  labels: Record<string, string>;
  sli: Sli;
  alerting: {
    name: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    pageAlert: AlertSpec;
    ticketAlert: AlertSpec;
  };
}

/** One document of a spec file: a service and its objectives. */
export interface SloSpec {
  /** `prometheus/v1`, or `sloth.slok.dev/v1` for the Kubernetes form. */
  spec: string;
  service: string;
  labels: Record<string, string>;
  slos: Objective[];
}

/** A spec file read: its documents, and every problem (`<source>: document N: <key>: <message>`). */
export interface SpecRead {
  specs: SloSpec[];
  problems: string[];
  /** Keys Sloth ignores (it reads specs without rejecting unknown keys): said, not refused. */
  warnings: string[];
}

/** The two forms' key names: the Kubernetes form spells them in camelCase. */
const KEYS = {
  'prometheus/v1': {
    errorQuery: 'error_query',
    totalQuery: 'total_query',
    errorRatioQuery: 'error_ratio_query',
    pageAlert: 'page_alert',
    ticketAlert: 'ticket_alert',
    sloPlugins: 'slo_plugins',
  },
  'sloth.slok.dev/v1': {
    errorQuery: 'errorQuery',
    totalQuery: 'totalQuery',
    errorRatioQuery: 'errorRatioQuery',
    pageAlert: 'pageAlert',
    ticketAlert: 'ticketAlert',
    sloPlugins: 'sloPlugins',
  },
} as const;
type Form = keyof typeof KEYS;
type Keys = (typeof KEYS)[Form];

/** Reads every document of a spec file; a file with a problem gives no specs. */
export function readSloSpecs(text: string, source: string): SpecRead {
  const problems: string[] = [];
  const warnings: string[] = [];
  const specs: SloSpec[] = [];
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  const present = list.filter((doc) => doc.contents !== null);
  present.forEach((doc, i) => {
    const where = present.length > 1 ? `${source}: document ${i + 1}` : source;
    if (doc.errors.length > 0) {
      problems.push(`${where}: not YAML: ${doc.errors[0]?.message.split('\n')[0] ?? ''}`);
      return;
    }
    const read = readDocument(doc.toJS() as unknown);
    problems.push(...read.problems.map((p) => `${where}: ${p}`));
    warnings.push(...read.warnings.map((p) => `${where}: ${p}`));
    if (read.spec) specs.push(read.spec);
  });
  if (present.length === 0) problems.push(`${source}: holds no spec`);
  problems.push(...duplicateIds(specs, source));
  return { specs: problems.length > 0 ? [] : specs, problems, warnings };
}

/**
 * The one spec of a file (the shipped spec, which the rules' generator reads); any problem throws
 * an Error of one line, the problems joined by "; ".
 */
export function parseSloSpec(text: string, source: string): SloSpec {
  const read = readSloSpecs(text, source);
  if (read.problems.length > 0) throw new Error(read.problems.join('; '));
  if (read.specs.length !== 1) throw new Error(`${source}: must hold one spec`);
  return read.specs[0] as SloSpec;
}

/** Sloth names an objective `<service>-<slo>`: the `sloth_id` of its series. */
export function sloId(spec: SloSpec, objective: Objective): string {
  return `${spec.service}-${objective.name}`;
}

/** Sloth refuses two objectives with one id in the files it reads together. */
function duplicateIds(specs: readonly SloSpec[], source: string): string[] {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const spec of specs) {
    for (const slo of spec.slos) {
      const id = sloId(spec, slo);
      if (seen.has(id)) problems.push(`${source}: objective ${id} is defined twice`);
      seen.add(id);
    }
  }
  return problems;
}

interface DocumentRead {
  spec?: SloSpec;
  problems: string[];
  warnings: string[];
}

/** Which form a document is; the Kubernetes form's fields are under `spec`. */
function formOf(doc: Node): { form: Form; body: Node; prefix: string[] } | string {
  if (doc['version'] === 'prometheus/v1') return { form: 'prometheus/v1', body: doc, prefix: [] };
  const api = doc['apiVersion'];
  if (api === 'sloth.slok.dev/v1' && doc['kind'] === 'PrometheusServiceLevel') {
    return { form: 'sloth.slok.dev/v1', body: asRecord(doc['spec']) ?? {}, prefix: ['spec'] };
  }
  if (typeof api === 'string' && api.startsWith('openslo/')) {
    return 'apiVersion: OpenSLO specs are not read here: write the objectives in Sloth prometheus/v1';
  }
  if (api !== undefined) {
    return 'apiVersion: must be sloth.slok.dev/v1 with kind PrometheusServiceLevel, or use version: prometheus/v1';
  }
  return 'version: must be prometheus/v1';
}

function readDocument(raw: unknown): DocumentRead {
  const doc = asRecord(raw);
  if (!doc) return { problems: ['(root): must be a mapping'], warnings: [] };
  const form = formOf(doc);
  if (typeof form === 'string') return { problems: [form], warnings: [] };
  const check: Checker = {
    problems: [],
    warnings: [],
    problem(path, message) {
      this.problems.push(`${formatKeyPath([...form.prefix, ...path])}: ${message}`);
    },
    warn(path) {
      this.warnings.push(
        `${formatKeyPath([...form.prefix, ...path])}: unknown key, ignored as Sloth ignores it`,
      );
    },
  };
  const spec = readBody(form.body, KEYS[form.form], form.form, check);
  return { ...(spec ? { spec } : {}), problems: check.problems, warnings: check.warnings };
}

function readBody(body: Node, keys: Keys, form: Form, check: Checker): SloSpec | undefined {
  const known = ['version', 'service', 'labels', keys.sloPlugins, 'slos'];
  for (const key of Object.keys(body)) if (!known.includes(key)) check.warn([key]);
  const service = checkName(body['service'], ['service'], check);
  const labels = checkLabels(body['labels'], ['labels'], check);
  checkPlugins(body[keys.sloPlugins], [keys.sloPlugins], check);
  const slos = Array.isArray(body['slos']) ? (body['slos'] as unknown[]) : [];
  if (slos.length === 0) check.problem(['slos'], 'must list at least one objective');
  const objectives = slos.map((slo, i) => readObjective(slo, ['slos', i], keys, check));
  if (check.problems.length > 0 || service === undefined) return undefined;
  if (objectives.some((o) => o === undefined)) return undefined;
  for (const [i, slo] of (objectives as Objective[]).entries()) {
    checkName(`${service}-${slo.name}`, ['slos', i, 'name'], check, 'with the service, the id');
  }
  return { spec: form, service, labels, slos: objectives as Objective[] };
}

const OBJECTIVE_KEYS = ['name', 'description', 'objective', 'labels', 'plugins', 'sli', 'alerting'];

function readObjective(
  raw: unknown,
  path: PropertyKey[],
  keys: Keys,
  check: Checker,
): Objective | undefined {
  const slo = asRecord(raw);
  if (!slo) {
    check.problem(path, 'must be a mapping');
    return undefined;
  }
  for (const key of Object.keys(slo)) if (!OBJECTIVE_KEYS.includes(key)) check.warn([...path, key]);
  const name = checkName(slo['name'], [...path, 'name'], check);
  const objective = slo['objective'];
  if (typeof objective !== 'number' || !(objective > 0 && objective <= 100)) {
    check.problem([...path, 'objective'], 'must be a number above 0 and at most 100');
  }
  const description = slo['description'];
  if (description !== undefined && typeof description !== 'string') {
    check.problem([...path, 'description'], 'must be a string');
  }
  const labels = checkLabels(slo['labels'], [...path, 'labels'], check);
  checkPlugins(slo['plugins'], [...path, 'plugins'], check);
  const sli = readSli(slo['sli'], [...path, 'sli'], keys, check);
  const alerting = readAlerting(slo['alerting'], [...path, 'alerting'], keys, check);
  if (name === undefined || sli === undefined || typeof objective !== 'number') return undefined;
  return {
    name,
    objective,
    description: typeof description === 'string' ? description : '',
    labels,
    sli,
    alerting,
  };
}

function readSli(raw: unknown, path: PropertyKey[], keys: Keys, check: Checker): Sli | undefined {
  const sli = asRecord(raw) ?? {};
  for (const key of Object.keys(sli)) {
    if (!['events', 'raw', 'plugin'].includes(key)) check.warn([...path, key]);
  }
  if (sli['plugin'] !== undefined) {
    check.problem(
      [...path, 'plugin'],
      'a Sloth SLI plugin is Go code that Sloth runs to write the query; it cannot be evaluated here: write its query as a raw or events SLI',
    );
    return undefined;
  }
  const events = asRecord(sli['events']);
  const ratio = asRecord(sli['raw']);
  if (events && ratio) {
    check.problem(path, 'only one SLI type is allowed: events or raw');
    return undefined;
  }
  if (events) {
    const errorQuery = checkQuery(
      events[keys.errorQuery],
      [...path, 'events', keys.errorQuery],
      check,
    );
    const totalQuery = checkQuery(
      events[keys.totalQuery],
      [...path, 'events', keys.totalQuery],
      check,
    );
    if (errorQuery !== undefined && errorQuery === totalQuery) {
      check.problem([...path, 'events'], 'the error and total queries cannot be the same');
    }
    if (errorQuery === undefined || totalQuery === undefined) return undefined;
    return { kind: 'events', errorQuery, totalQuery };
  }
  if (ratio) {
    const query = checkQuery(
      ratio[keys.errorRatioQuery],
      [...path, 'raw', keys.errorRatioQuery],
      check,
    );
    return query === undefined ? undefined : { kind: 'raw', errorRatioQuery: query };
  }
  check.problem(
    path,
    'needs one SLI type: events (error and total queries) or raw (an error ratio query)',
  );
  return undefined;
}

function readAlerting(
  raw: unknown,
  path: PropertyKey[],
  keys: Keys,
  check: Checker,
): Objective['alerting'] {
  const alerting = asRecord(raw) ?? {};
  const known = ['name', 'labels', 'annotations', keys.pageAlert, keys.ticketAlert];
  for (const key of Object.keys(alerting)) if (!known.includes(key)) check.warn([...path, key]);
  const name = typeof alerting['name'] === 'string' ? alerting['name'] : '';
  const labels = checkLabels(alerting['labels'], [...path, 'labels'], check);
  const annotations = checkLabels(
    alerting['annotations'],
    [...path, 'annotations'],
    check,
    'annotation',
  );
  const alert = (key: string) => checkAlert(alerting[key], name, [...path, key], check);
  return {
    name,
    labels,
    annotations,
    pageAlert: alert(keys.pageAlert),
    ticketAlert: alert(keys.ticketAlert),
  };
}
