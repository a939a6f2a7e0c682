/**
 * The objectives' spec is read by one schema (src/report/sloth-spec.ts) for the rules' generator
 * and the report (docs/alerts.md, "Objectives"): the shipped spec reads the same to both, and a
 * mistake is refused with its key, on one line.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSloSpec, SLO_SPEC_PATH } from '../../src/report/sloth-spec.js';
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
    expect(objective).toMatchObject({
      description: '',
      alertName: 'IsaSloErrorBudgetBurn',
      summary: '',
      ticketSeverity: 'warning',
    });
  });

  it.each([
    [['objective: 100', ...VALID.slice(1)], 'slos[0].objective: must be a percentage'],
    [['objective: "high"', ...VALID.slice(1)], 'slos[0].objective: must be a percentage'],
    [
      [...VALID.slice(0, 3), '    error_query: sum(a)', ...VALID.slice(4)],
      'slos[0].sli.events.error_query: must be a query with a {{.window}} range',
    ],
    [VALID.slice(0, 5), 'slos[0].alerting: must hold page_alert'],
    [
      [...VALID.slice(0, 6), '  page_alert: { disable: false }'],
      'slos[0].alerting.page_alert.disable: must be disabled',
    ],
  ])('refuses %j naming the key', (fields, message) => {
    expect(() => parseSloSpec(slo(fields), 'x.yaml')).toThrow(`x.yaml: ${message}`);
  });

  it('refuses a spec in another format, every problem on one line', () => {
    let message = '';
    try {
      parseSloSpec('version: v2\nslos: []\n', 'x.yaml');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('x.yaml: version: must be prometheus/v1');
    expect(message).toContain('x.yaml: service:');
    expect(message).toContain('x.yaml: slos: must list at least one objective');
    expect(message).not.toContain('\n');
  });

  it('gives the report a ReportError, so it exits with one line and no stack', () => {
    expect(() => parseObjectives('slos: [', 'x.yaml')).toThrow(ReportError);
    expect(() => parseObjectives(slo(VALID.slice(1)), 'x.yaml')).toThrow(
      /x\.yaml: slos\[0\]\.objective/,
    );
  });
});
