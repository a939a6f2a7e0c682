/**
 * The V8 tiering flag and memory mode: the flags this V8 has (an unknown flag is an error on
 * stderr), and in effect in a started CLI process, on whichever Node runs the tests (20 here, 24
 * in the image and scripts/test-node24.sh).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MEMORY_FLAGS } from '../src/v8-memory.js';
import { TIERING_FACTOR, tieringFlag } from '../src/v8-tiering.js';
import { runCli } from './support/cli.js';

const RECORD_FLAGS = new URL('./support/record-v8-flags.mjs', import.meta.url).href;

describe('tieringFlag', () => {
  it('raises the bytecode budget up to V8 11 and leaves later V8s as they are', () => {
    expect(tieringFlag('11.3.244.8-node.38')).toBe(`--interrupt-budget=${TIERING_FACTOR * 67_584}`);
    expect(tieringFlag('12.4.254.21-node.33')).toBeNull();
    expect(tieringFlag('13.6.233.17-node.53')).toBeNull();
  });

  it("names a flag this Node's V8 knows, or none where V8 would not know the budget flag", () => {
    const known = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    const flag = tieringFlag(process.versions.v8)?.split('=')[0];
    // From V8 12 the budget is a count of invocations: `--interrupt-budget` is gone, so the null
    // is what keeps an "unrecognized flag" error off stderr, not only a preference.
    expect(flag !== undefined).toBe(known.includes('  --interrupt-budget ('));
    if (flag !== undefined) expect(known).toContain(`  ${flag} (`);
  });
});

describe('in a started CLI process', () => {
  it('sets exactly the flags of this V8 before any command, and V8 takes them without a word', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'isa-v8-flags-')), 'flags.json');
    const run = await runCli(['--version'], {
      env: { NODE_OPTIONS: `--import ${RECORD_FLAGS}`, V8_FLAGS_LOG: log },
    });
    // V8 reports a flag it does not know on stderr ("Error: unrecognized flag").
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const expected = tieringFlag(process.versions.v8);
    expect(JSON.parse(readFileSync(log, 'utf8'))).toEqual([
      ...(expected === null ? [] : [expected]),
      ...MEMORY_FLAGS,
    ]);
  });
});
