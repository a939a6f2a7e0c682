/**
 * The check contract's promise: a check is one folder, `src/checks/<name>/`, plus one line in the
 * registry (`src/checks/index.ts`). Every check folder is registered, and the generic layers
 * (runner, environment, scheduler, recorder, config, CLI, status, measurement) name no check.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isCheck, type AnyCheck } from '../../src/kernel/check.js';
import { CHECK_LIST, CHECK_NAMES, SUMMARY_KEYS } from '../../src/checks/index.js';
import { UNIVERSAL_METRICS } from '../../src/metrics/definitions.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');
const CHECKS_DIR = join(SRC, 'checks');
const checks = CHECK_LIST as readonly AnyCheck[];

/**
 * Files outside the registry and the checks' own files where a check's name may appear, and why.
 * Each is a place where the word means something else than "the check", or a configuration
 * document rather than code that dispatches on checks.
 */
const EXEMPT: Record<string, string> = {
  'src/simulator/': 'the fake of the ISA API, not a generic layer: it serves GET /ping',
  'src/api/': 'the API client: `tls` is also the protocol and a phase of every request',
  'src/kernel/vocabulary.ts': '`tls` is also a request phase (the `phase` label)',
  'src/cli/demo.ts': 'the demo configuration: a config document, like examples/',
  'src/cli/simulate.ts': "the simulator's options: `--tls` is the protocol it serves",
  'src/report/':
    'the SLA report reads exported series, not checks: its JSON contract (docs/cli.md, "report") names the `lifecycle` figures and the objectives of slo/isa-monitor.sloth.yaml',
};

/** A check name as a string ('ping', "ping", `ping`, '/ping'), a property (.ping) or a key (ping:). */
const MENTION = new RegExp(
  `['"\`/.](${CHECK_NAMES.join('|')})\\b|\\b(${CHECK_NAMES.join('|')})\\s*:`,
);

/** The folders of src/checks/ that hold a check (an `index.ts`); `shared/` holds their helpers. */
function checkFolders(): string[] {
  return readdirSync(CHECKS_DIR).filter(
    (name) => name !== 'shared' && existsSync(join(CHECKS_DIR, name, 'index.ts')),
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Source without comments: a comment may say "e.g. the lifecycle check". */
function code(path: string): string {
  return readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:\\])\/\/.*$/gm, '$1');
}

describe('the check registry', () => {
  it('registers the check of every folder of src/checks/', async () => {
    const found: string[] = [];
    for (const folder of checkFolders()) {
      const module = (await import(join(CHECKS_DIR, folder, 'index.ts'))) as Record<
        string,
        unknown
      >;
      for (const value of Object.values(module)) {
        if (isCheck(value)) {
          expect(checks, `${folder}/ exports check ${value.name}`).toContain(value);
          found.push(value.name);
        }
      }
    }
    expect(found.sort()).toEqual([...CHECK_NAMES].sort());
  });

  it('keeps each check in a folder of its own name', () => {
    for (const check of checks) expect(checkFolders(), check.name).toContain(check.name);
  });

  it('has unique check names, metric keys and metric names', () => {
    expect(new Set(CHECK_NAMES).size).toBe(CHECK_NAMES.length);
    const keys = [
      ...Object.keys(UNIVERSAL_METRICS),
      ...checks.flatMap((check) => Object.keys(check.metrics)),
    ];
    expect(new Set(keys).size).toBe(keys.length);
    const names = [
      ...Object.values(UNIVERSAL_METRICS).map((d) => d.name),
      ...checks.flatMap((check) => Object.values(check.metrics).map((d) => d.name)),
    ];
    expect(new Set(names).size).toBe(names.length);
  });

  it('gives every check a config section with the uniform keys and a summary of its keys', () => {
    for (const check of checks) {
      const parsed = check.config.schema.safeParse({ enabled: false });
      expect(parsed.success, check.name).toBe(true);
      const config = check.config.toConfig(parsed.data, { baseUrl: 'https://api.example' });
      expect(Object.keys(config), check.name).toEqual(
        expect.arrayContaining(['enabled', 'intervalMs', 'timeoutMs', 'requestTimeoutMs']),
      );
      expect(Object.keys(check.summary(null)).sort(), check.name).toEqual(
        [...check.summaryKeys].sort(),
      );
      for (const key of check.summaryKeys) expect(SUMMARY_KEYS).toContain(key);
    }
  });
});

describe('the generic layers', () => {
  it('name no check outside the registry and the checks’ own files', () => {
    const own = checks.map((check) => `src/checks/${check.name}/`);
    const found: string[] = [];
    for (const path of sourceFiles(SRC)) {
      const file = relative(ROOT, path);
      if (file === 'src/checks/index.ts') continue;
      if ([...own, ...Object.keys(EXEMPT)].some((prefix) => file.startsWith(prefix))) continue;
      code(path)
        .split('\n')
        .forEach((line, i) => {
          if (MENTION.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('finds a check name where one is written (the scan itself works)', () => {
    const name = CHECK_NAMES[0] ?? '';
    expect(MENTION.test(`if (check.name === '${name}') {`)).toBe(true);
    expect(MENTION.test(`config.${name}.timeoutMs`)).toBe(true);
    expect(MENTION.test(`{ ${name}: { enabled: true } }`)).toBe(true);
    expect(MENTION.test(`for (const check of CHECK_LIST) {`)).toBe(false);
  });
});
