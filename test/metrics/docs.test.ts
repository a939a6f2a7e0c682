/**
 * The hand-written prose of docs/metrics.md stays true to the metric definitions, and its PromQL
 * parses in promtool. Its table of every metric (name, type, labels, help) is written by
 * `npm run generate`, and test/build/generated.test.ts keeps it current.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  knownStatusCodes,
  operationStatusCodes,
  type MetricDefinition,
} from '../../src/metrics/definitions.js';
import { CHECK_LIST, METRICS } from '../../src/checks/index.js';
import type { AnyCheck } from '../../src/kernel/check.js';
import { checkMetricsPath } from '../../scripts/docs/render-docs.js';

const OPERATION_STATUS_CODES = operationStatusCodes(CHECK_LIST);
const KNOWN_STATUS_CODES = knownStatusCodes(CHECK_LIST);

const DOC = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');
/** The doc with line breaks folded, so a wrapped list still matches. */
const FLAT = DOC.replace(/\s+/g, ' ');
const DEFINITIONS = Object.values(METRICS) as MetricDefinition[];
const hasPromtool = spawnSync('promtool', ['--version']).status === 0;

describe('docs/metrics.md', () => {
  it('documents every metric in a section of its own', () => {
    for (const def of DEFINITIONS) expect(DOC, def.name).toContain(`#### \`${def.name}\``);
  });

  it('documents no isa_ metric that does not exist', () => {
    const names = new Set(DEFINITIONS.map((d) => d.name));
    const mentioned = [...DOC.matchAll(/\bisa_[a-z0-9_]+/g)]
      .map((m) => m[0].replace(/_(bucket|sum|count)$/, ''))
      .filter((n) => !n.endsWith('_'));
    // An OpenMetrics counter family is named without _total.
    const unknown = [...new Set(mentioned)].filter(
      (n) => !names.has(n) && !names.has(`${n}_total`),
    );
    expect(unknown).toEqual([]);
  });

  it('lists the buckets of every histogram as defined', () => {
    for (const def of DEFINITIONS.filter((d) => d.type === 'histogram')) {
      if (def === METRICS.checkDuration) continue; // documented as "as the lifecycle steps"
      expect(FLAT.includes(`\`${(def.buckets ?? []).join(', ')}\``), def.name).toBe(true);
    }
    expect(METRICS.checkDuration.buckets).toEqual(METRICS.lifecycleStepDuration.buckets);
  });

  it('lists every known value of every label', () => {
    for (const def of DEFINITIONS) {
      for (const [label, values] of Object.entries(def.knownValues ?? {})) {
        if (label === 'code') continue; // listed as one list, below
        for (const value of values) {
          expect(FLAT.includes(`\`${value}\``), `${def.name}{${label}="${value}"}`).toBe(true);
        }
      }
    }
    expect(FLAT.includes(`\`${KNOWN_STATUS_CODES.join(', ')}\``), 'known status codes').toBe(true);
  });

  it('lists the codes each operation starts with, as the checks declare them', () => {
    for (const [operation, codes] of Object.entries(OPERATION_STATUS_CODES)) {
      const row = new RegExp(
        `^\\| \`${operation}\` +\\|[^|]+\\| \`${codes.join(', ')}\` +\\|[^|]+\\|$`,
        'm',
      );
      expect(DOC, operation).toMatch(row);
    }
  });

  it.skipIf(!hasPromtool)('has PromQL examples that promtool accepts', () => {
    const blocks = [...DOC.matchAll(/```promql\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(DEFINITIONS.length);
    // Each example as a recording rule: promtool runs the real parser and type checker on it.
    const rules = blocks
      .map(
        (expr, i) =>
          `      - record: doc_example_${i}\n        expr: |\n${expr
            .trimEnd()
            .split('\n')
            .map((l) => `          ${l}`)
            .join('\n')}`,
      )
      .join('\n');
    const dir = mkdtempSync(join(tmpdir(), 'isa-doc-promql-'));
    try {
      const file = join(dir, 'rules.yaml');
      writeFileSync(file, `groups:\n  - name: docs\n    rules:\n${rules}\n`);
      const run = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      expect(`${run.stdout}${run.stderr}`).toContain(`SUCCESS: ${blocks.length} rules found`);
      expect(run.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Each registered check's metric families and the `####` sections of its folder's metrics.md. */
const checkMetricDocs = (CHECK_LIST as readonly AnyCheck[]).map((check) => {
  const file = checkMetricsPath(check.name);
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const sections = [...text.matchAll(/^#### `([a-z0-9_]+)`$/gm)].map((m) => m[1] ?? '');
  const own = Object.values(check.metrics).map((def) => def.name);
  return { check: check.name, file, sections, own };
});

describe("each check's metrics.md", () => {
  it.each(checkMetricDocs)('$check documents each of its metrics in its folder', (doc) => {
    for (const name of doc.own)
      expect(doc.sections, `${name}: no section in ${doc.file}`).toContain(name);
  });

  it.each(checkMetricDocs)('$check documents no metric of another check', (doc) => {
    for (const other of checkMetricDocs.filter((o) => o.check !== doc.check)) {
      for (const name of doc.sections) {
        expect(other.own, `${doc.file}: ${name} belongs to ${other.file}`).not.toContain(name);
      }
    }
  });
});
