/**
 * Objectives' specs are read as Sloth reads them (src/report/sloth-spec.ts; docs/alerts.md,
 * "Objectives"; docs/cli.md, "validate-slo"): the shipped spec reads the same to the rules and the
 * report, and each of Sloth's validation rules refuses its mistake at its key, every problem at once.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSloSpec, readSloSpecs, SLO_SPEC_PATH } from '../../src/report/sloth-spec.js';
import { parseObjectives } from '../../src/report/objectives.js';
import { ReportError } from '../../src/report/prometheus.js';
import { readSloSpec } from '../../scripts/rules/slo-rules.js';

const shipped = readFileSync(SLO_SPEC_PATH, 'utf8');

const slo = (fields: string[]): string =>
  [
    'version: prometheus/v1',
    'service: isa-monitor',
    'slos:',
    '  - name: ping-availability',
    ...fields.map((line) => `    ${line}`),
  ].join('\n');

const VALID = [
  'objective: 99.5',
  'sli:',
  '  events:',
  '    error_query: sum(increase(a[{{.window}}]))',
  '    total_query: sum(increase(b[{{.window}}]))',
  'alerting:',
  '  page_alert: { disable: true }',
  '  ticket_alert: { disable: true }',
];
const withLine = (index: number, line: string) => [
  ...VALID.slice(0, index),
  line,
  ...VALID.slice(index + 1),
];

describe('the objectives spec', () => {
  it('reads the shipped spec the same for the rules and the report', () => {
    const spec = readSloSpec('.');
    expect(spec.service).toBe('isa-monitor');
    expect(spec.slos.map((s) => s.name)).toEqual([
      'ping-availability',
      'ping-latency',
      'lifecycle-success',
    ]);
    const objectives = parseObjectives(shipped, SLO_SPEC_PATH);
    for (const s of spec.slos) expect(objectives.get(s.name)).toBe(s.objective / 100);
  });

  it('fills what Sloth leaves optional', () => {
    const [objective] = parseSloSpec(slo(VALID), 'x.yaml').slos;
    expect(objective).toMatchObject({ description: '', labels: {} });
    // Without alerting, both alerts are enabled, as Sloth enables them, and need a name.
    expect(readSloSpecs(slo(VALID.slice(0, 5)), 'x.yaml').problems).toEqual([
      'x.yaml: slos[0].alerting.name: is required while page_alert is enabled (set page_alert.disable: true to go without)',
      'x.yaml: slos[0].alerting.name: is required while ticket_alert is enabled (set ticket_alert.disable: true to go without)',
    ]);
  });

  it('accepts an objective of 100 and a raw SLI, with spaces inside the window braces', () => {
    const spec = parseSloSpec(
      slo([
        'objective: 100',
        'sli:',
        '  raw:',
        '    error_ratio_query: sum(rate(e[{{ .window }}])) / sum(rate(t[{{ .window }}]))',
        'alerting: { name: A }',
      ]),
      'x.yaml',
    );
    expect(spec.slos[0]?.sli).toEqual({
      kind: 'raw',
      errorRatioQuery: 'sum(rate(e[{{ .window }}])) / sum(rate(t[{{ .window }}]))',
    });
  });

  it.each([
    [withLine(0, 'objective: 0'), 'slos[0].objective: must be a number above 0 and at most 100'],
    [
      withLine(0, 'objective: "high"'),
      'slos[0].objective: must be a number above 0 and at most 100',
    ],
    [
      withLine(3, '    error_query: sum(a)'),
      'slos[0].sli.events.error_query: must use the {{.window}} template variable as its range',
    ],
    [
      withLine(3, '    error_query: sum(increase(b[{{.window}}]))'),
      'slos[0].sli.events: the error and total queries cannot be the same',
    ],
    [
      withLine(3, '    error_query: sum(increase(a[{{.window}}])'),
      'slos[0].sli.events.error_query: is not PromQL: unclosed "("',
    ],
    [
      withLine(3, '    error_query: sum(increase(a[{{.window}}])) / {{.slo}}'),
      'slos[0].sli.events.error_query: holds a template other than {{.window}}, the only variable Sloth gives',
    ],
    [
      ['objective: 99', 'sli:', '  plugin: { id: sloth-common/availability }', ...VALID.slice(5)],
      'slos[0].sli.plugin: a Sloth SLI plugin is Go code that Sloth runs to write the query; it cannot be evaluated here: write its query as a raw or events SLI',
    ],
    [
      [...VALID.slice(0, 5), '  raw: { error_ratio_query: "x[{{.window}}]" }', ...VALID.slice(5)],
      'slos[0].sli: only one SLI type is allowed: events or raw',
    ],
    [
      [...VALID, 'labels: { __name__: x }'],
      'slos[0].labels.__name__: the label __name__ is not allowed',
    ],
    [[...VALID, 'labels: { tier: 2 }'], 'slos[0].labels.tier: must be a string (quote it)'],
    [[...VALID, 'labels: { tier: "" }'], 'slos[0].labels.tier: the label value is required'],
    [
      withLine(7, '  ticket_alert: { labels: { a: b } }'),
      'slos[0].alerting.name: is required while ticket_alert is enabled (set ticket_alert.disable: true to go without)',
    ],
    [
      [...VALID, 'plugins: { overridePrevious: true, chain: [] }'],
      'slos[0].plugins: overridePrevious is set but the chain lists no plugin',
    ],
  ])('refuses %j naming the key', (fields, message) => {
    expect(readSloSpecs(slo(fields), 'x.yaml').problems).toEqual([`x.yaml: ${message}`]);
  });

  it.each([
    ['-ping', 'must start and end with a letter or digit'],
    ['ping availability', 'must start and end with a letter or digit'],
  ])('refuses the objective name %j as Sloth does', (name, message) => {
    const text = slo(VALID).replace('name: ping-availability', `name: "${name}"`);
    expect(readSloSpecs(text, 'x.yaml').problems[0]).toContain(`x.yaml: slos[0].name: ${message}`);
  });

  it('refuses an objective defined twice across documents', () => {
    const text = `${slo(VALID)}\n---\n${slo(VALID)}\n`;
    expect(readSloSpecs(text, 'x.yaml').problems).toEqual([
      'x.yaml: objective isa-monitor-ping-availability is defined twice',
    ]);
  });

  it('refuses a spec in another format, every problem on one line', () => {
    expect(() => parseSloSpec('version: prometheus/v999\nslos: []\n', 'x.yaml')).toThrow(
      'x.yaml: version: must be prometheus/v1',
    );
    let message = '';
    try {
      parseSloSpec('version: prometheus/v1\nslos: []\n', 'x.yaml');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(
      'x.yaml: service: is required; x.yaml: slos: must list at least one objective',
    );
  });

  it('names the document of a problem in a file of several', () => {
    const text = `${slo(VALID)}\n---\n${slo(withLine(0, 'objective: 101'))}\n`.replace(
      /service: isa-monitor\nslos:\n {2}- name: ping-availability\n {4}objective: 101/,
      'service: other\nslos:\n  - name: ping-availability\n    objective: 101',
    );
    expect(readSloSpecs(text, 'x.yaml').problems).toEqual([
      'x.yaml: document 2: slos[0].objective: must be a number above 0 and at most 100',
    ]);
  });

  it('gives the report a ReportError, so it exits with one line and no stack', () => {
    expect(() => parseObjectives('slos: [', 'x.yaml')).toThrow(ReportError);
    expect(() => parseObjectives(slo(VALID.slice(1)), 'x.yaml')).toThrow(
      /x\.yaml: slos\[0\]\.objective/,
    );
  });

  it('keeps the generator to tickets: a page alert in the shipped spec is refused', () => {
    // readSloSpec reads the checked-in file; the rule is the generator's, not Sloth's.
    expect(readSloSpec('.').slos.every((s) => s.alerting.pageAlert.disable)).toBe(true);
  });
});
