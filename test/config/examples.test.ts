/**
 * The shipped examples load without problems, and the documentation stays true: every key the
 * schema knows and every variable is documented, and the error example is what the code prints.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  formatProblems,
  loadConfig,
  parseConfigText,
  type LoadResult,
} from '../../src/config/index.js';
import { OVERRIDES } from '../../src/config/env.js';
import { unwrapSchema } from '../../src/config/problems.js';
import { buildConfigSchema } from '../../src/config/schema.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { lifecycleCheck } from '../../src/checks/lifecycle/index.js';
import { sectionOf } from '../../src/config/section.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DOC = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');

function valid(result: LoadResult) {
  if (!result.ok) throw new Error(formatProblems(result.problems));
  // An example teaches the current keys: a deprecated one would be copied on.
  expect(formatProblems(result.warnings)).toBe('');
  return result.config;
}

describe('examples', () => {
  it('examples/isa-monitor.yaml loads with its key variable and key file', () => {
    const realRead = (path: string) => readFileSync(path, 'utf8');
    const readFile = (path: string) =>
      path === '/run/secrets/isa-sandbox-api-key' ? 'sandbox-key\n' : realRead(path);
    const config = valid(
      loadConfig({
        checks: CHECK_LIST,
        configFile: 'examples/isa-monitor.yaml',
        env: { ISA_PRODUCTION_API_KEY: 'production-key' },
        cwd: ROOT,
        readFile,
      }),
    );
    expect(config.environments.map((e) => [e.name, e.apiKeySource?.kind, e.apiKey])).toEqual([
      ['production', 'env', 'production-key'],
      ['sandbox', 'file', 'sandbox-key'],
    ]);
    expect(config.listen).toEqual({ host: '0.0.0.0', port: 9464 });
  });

  it('examples/simulator.yaml points both environments at the local simulator', () => {
    const config = valid(
      loadConfig({
        checks: CHECK_LIST,
        configFile: 'examples/simulator.yaml',
        env: { ISA_SIMULATOR_API_KEY: 'dev-key' },
        cwd: ROOT,
      }),
    );
    expect(config.environments.map((e) => e.baseUrl)).toEqual([
      'http://127.0.0.1:8080/env/production',
      'http://127.0.0.1:8080/env/sandbox',
    ]);
    for (const env of config.environments) {
      expect(env.apiKeySource).toEqual({ kind: 'env', name: 'ISA_SIMULATOR_API_KEY' });
      expect(sectionOf(env, lifecycleCheck).addresses).toEqual([
        { street1: '2 Pending Ave', zip: '80202', expect: 'available' },
        { street1: '3 No Service Rd', zip: '80202', expect: 'no_service' },
      ]);
    }
    expect(config.stateFile).toBe(join(ROOT, 'examples/.isa-monitor/sessions.json'));
  });
});

describe('docs/configuration.md', () => {
  // The check sections' rows are generated from their schemas (npm run generate), which refuses
  // an undocumented key; this holds the hand-written rows (top level, environment, addresses).
  it('documents every key the schema accepts, by its full path', () => {
    const { schema } = buildConfigSchema({
      checks: CHECK_LIST,
      env: {},
      baseDir: '/',
      readFile: () => '',
    });
    const paths = keyPaths(schema, '');
    expect(paths.length).toBeGreaterThan(25);
    const missing = paths.filter((p) => !DOC.includes(`\`${p}\``));
    expect(missing).toEqual([]);
  });

  it('documents every variable', () => {
    const variables = [
      ...OVERRIDES.map((o) => o.variable),
      'ISA_MONITOR_CONFIG',
      'ISA_ENVIRONMENTS',
      'ISA_<NAME>_BASE_URL',
      'ISA_<NAME>_API_KEY',
      'ISA_<NAME>_API_KEY_FILE',
      'ISA_<NAME>_CA_FILE',
    ];
    expect(variables.filter((v) => !DOC.includes(`\`${v}\``))).toEqual([]);
  });

  it('shows the error output the code really prints', () => {
    const input = blockAfter('<!-- error-example:input -->');
    const output = blockAfter('<!-- error-example:output -->');
    const result = parseConfigText(input, {
      checks: CHECK_LIST,
      env: {},
      source: 'isa-monitor.yaml',
    });
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : formatProblems(result.problems)).toBe(output.trimEnd());
  });
});

/** The fenced block that follows a marker comment. */
function blockAfter(marker: string): string {
  const start = DOC.indexOf(marker);
  expect(start, marker).toBeGreaterThanOrEqual(0);
  const match = /```\w*\n([\s\S]*?)```/.exec(DOC.slice(start));
  return match?.[1] ?? '';
}

/** Every key path of an object schema, lists written as `[]`: `environments[].ping.interval`. */
function keyPaths(schema: z.ZodType, prefix: string): string[] {
  const inner = unwrapSchema(schema);
  if (inner instanceof z.ZodArray) return keyPaths(inner.element as z.ZodType, `${prefix}[]`);
  if (!(inner instanceof z.ZodObject)) return [];
  return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([key, child]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    return [path, ...keyPaths(child, path)];
  });
}
