/**
 * Sloth's own validation cases, as fixtures of our own shaped after them
 * (test/report/fixtures/sloth/README.md): every spec Sloth accepts is accepted, every spec it
 * refuses is refused for Sloth's reason (docs/cli.md, "validate-slo").
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSloSpecs } from '../../src/report/sloth-spec.js';

const DIR = 'test/report/fixtures/sloth';
const read = (kind: string, file: string) =>
  readSloSpecs(readFileSync(join(DIR, kind, file), 'utf8'), file);

/** Each bad case and the one problem Sloth refuses it for. */
const BAD: Record<string, string[]> = {
  'bad-aa.yaml': ['bad-aa.yaml: slos[1].objective: must be a number above 0 and at most 100'],
  'bad-ab.yaml': ['bad-ab.yaml: slos[1].objective: must be a number above 0 and at most 100'],
  'bad-ba.yaml': ['bad-ba.yaml: slos[1].objective: must be a number above 0 and at most 100'],
  'bad-multi.yaml': [
    'bad-multi.yaml: document 2: slos[1].sli: needs one SLI type: events (error and total queries) or raw (an error ratio query)',
  ],
  'bad-k8s.yaml': ['bad-k8s.yaml: spec.service: is required'],
  'bad-multi-k8s.yaml': [
    'bad-multi-k8s.yaml: document 1: spec.slos[0].alerting.name: is required while pageAlert is enabled (set pageAlert.disable: true to go without)',
    'bad-multi-k8s.yaml: document 1: spec.slos[0].alerting.name: is required while ticketAlert is enabled (set ticketAlert.disable: true to go without)',
  ],
  'bad-openslo.yaml': [
    'bad-openslo.yaml: apiVersion: OpenSLO specs are not read here: write the objectives in Sloth prometheus/v1',
  ],
};

describe("Sloth's validation cases", () => {
  const good = readdirSync(join(DIR, 'good')).sort();
  const bad = readdirSync(join(DIR, 'bad')).sort();

  it('has every case of Sloth: 7 good (5 prometheus/v1, 2 Kubernetes), 7 bad', () => {
    expect(good).toEqual([
      'good-aa.yaml',
      'good-ab.yaml',
      'good-ba.yaml',
      'good-k8s.yaml',
      'good-multi-k8s.yaml',
      'good-multi.yaml',
      'in-base.yaml',
    ]);
    expect(bad).toEqual(Object.keys(BAD).sort());
  });

  it.each(good)('accepts %s with every objective', (file) => {
    const result = read('good', file);
    expect(result.problems).toEqual([]);
    const documents = file.includes('multi') ? 2 : 1;
    expect(result.specs).toHaveLength(documents);
    for (const spec of result.specs) {
      expect(spec.slos.map((s) => s.sli.kind)).toEqual(['events', 'raw']);
    }
  });

  it('says which keys it ignores, as Sloth ignores them', () => {
    expect(read('good', 'good-aa.yaml').warnings).toEqual([
      'good-aa.yaml: slos[0].alerting.pageAlert: unknown key, ignored as Sloth ignores it',
      'good-aa.yaml: slos[0].alerting.ticketAlert: unknown key, ignored as Sloth ignores it',
    ]);
    expect(read('good', 'in-base.yaml').warnings).toEqual([]);
  });

  it.each(bad)('refuses %s for the reason Sloth refuses it', (file) => {
    const result = read('bad', file);
    expect(result.problems).toEqual(BAD[file]);
    expect(result.specs).toEqual([]);
  });
});
