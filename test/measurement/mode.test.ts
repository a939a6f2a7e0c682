/**
 * Where `--measurement.thread` puts the measurements (docs/architecture.md, "Two threads, or
 * one"): `auto` measures on the main thread up to INLINE_UP_TO_ENVIRONMENTS environments and in a
 * worker above; `inline` and `worker` are kept whatever the count.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  INLINE_UP_TO_ENVIRONMENTS,
  INLINE_V8_FLAGS,
  measurementMode,
} from '../../src/measurement/host.js';

describe('measurementMode', () => {
  it('auto: inline up to the line, a worker above it', () => {
    expect(measurementMode('auto', 1)).toBe('inline');
    expect(measurementMode('auto', INLINE_UP_TO_ENVIRONMENTS)).toBe('inline');
    expect(measurementMode('auto', INLINE_UP_TO_ENVIRONMENTS + 1)).toBe('worker');
    expect(measurementMode('auto', 1000)).toBe('worker');
  });

  it('keeps an explicit choice at any count', () => {
    expect(measurementMode('worker', 2)).toBe('worker');
    expect(measurementMode('inline', 1000)).toBe('inline');
  });
});

describe('INLINE_V8_FLAGS', () => {
  it('are flags this V8 knows (an unknown one is an error on stderr, and does nothing)', () => {
    const known = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    for (const flag of INLINE_V8_FLAGS) {
      const name = flag.replace(/^--(no-)?/, '--');
      expect(known).toContain(`  ${name} (`);
    }
  });
});
