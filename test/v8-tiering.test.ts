/**
 * The V8 tiering flag: the one this V8 has (an unknown flag is an error on stderr), and in effect in
 * a started CLI process.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { TIERING_FACTOR, tieringFlag } from '../src/v8-tiering.js';

describe('tieringFlag', () => {
  it('raises the bytecode budget up to V8 11 and leaves later V8s as they are', () => {
    expect(tieringFlag('11.3.244.8-node.38')).toBe(`--interrupt-budget=${TIERING_FACTOR * 67_584}`);
    expect(tieringFlag('13.6.233.17-node.53')).toBeNull();
  });

  it("names a flag this Node's V8 knows, if any", () => {
    const flag = tieringFlag(process.versions.v8)?.split('=')[0];
    if (flag === undefined) return;
    const known = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    expect(known).toContain(`  ${flag} (`);
  });
});
