/**
 * The `isa-monitor` command's interpreter line (src/cli.ts; esbuild keeps it as dist/cli.js's
 * first line) carries the process-wide memory settings: they must be on it, and they must take
 * effect when a process is started through it as the kernel does, with `/usr/bin/env -S`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const line = readFileSync(new URL('../../src/cli.ts', import.meta.url), 'utf8').split('\n', 1)[0]!;

const SETTLED_YOUNG_GENERATION = new URL(
  '../support/settled-young-generation.mjs',
  import.meta.url,
);

/** What a process started through the line reports about itself (stands in for the script). */
const PROBE = `
import(${JSON.stringify(SETTLED_YOUNG_GENERATION.href)}).then(({ settledNewSpaceBytes }) => {
  console.log(JSON.stringify({
    execArgv: process.execArgv,
    arenaMax: process.env.MALLOC_ARENA_MAX,
    mmapThreshold: process.env.MALLOC_MMAP_THRESHOLD_,
    newSpaceBytes: settledNewSpaceBytes(),
  }));
});`;

describe('the interpreter line of the isa-monitor command', () => {
  it('runs node through env -S with the memory settings', () => {
    expect(line).toBe(
      '#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=1 --v8-pool-size=1 --expose-gc',
    );
    // Linux before 5.1 reads only 127 bytes of it (BINPRM_BUF_SIZE; 255 since).
    expect(Buffer.byteLength(line)).toBeLessThan(128);
  });

  it('gives the process its options and environment, and caps the young generation', () => {
    const words = line.replace(/^#!\/usr\/bin\/env -S /, '');
    // env -S splits the one argument as the kernel passes it; `-e` stands in for the script.
    const out = execFileSync(
      '/usr/bin/env',
      // The line's `--expose-gc` gives the probe the `gc` it settles with.
      ['-S', words.replace(/\bnode\b/, process.execPath), '-e', PROBE],
      {
        env: { PATH: process.env['PATH'] },
        encoding: 'utf8',
      },
    );
    const report = JSON.parse(out) as {
      execArgv: string[];
      arenaMax: string;
      mmapThreshold: string;
      newSpaceBytes: number;
    };
    expect(report.execArgv).toEqual(
      expect.arrayContaining(['--max-semi-space-size=1', '--v8-pool-size=1', '--expose-gc']),
    );
    expect(report.arenaMax).toBe('2');
    expect(report.mmapThreshold).toBe('131072');
    // 1 MiB semi-spaces: V8's default grows this many survivors' young generation to 16 MiB+.
    expect(report.newSpaceBytes).toBeLessThanOrEqual(2 * 1024 * 1024);
  });
});
