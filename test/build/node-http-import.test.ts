/**
 * The lint rule that keeps `node:http` out of the daemon's ES imports (eslint.config.js): on Node
 * 24 such an import loads Node's own undici, 13 MiB of RSS (src/server/node-http.ts). The rule
 * refuses a value import and lets a type import and the module's own `require` through.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

/** The messages of the restricted-imports rule for `code` as if it were `file`. */
async function refusals(code: string, file: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: file });
  return result!.messages
    .filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports')
    .map((m) => m.message);
}

describe('the node:http import rule', () => {
  it('refuses a value import of node:http in the daemon, and lets a type import through', async () => {
    const file = 'src/server/listen.ts';
    expect(
      await refusals("import { createServer } from 'node:http';\nvoid createServer;\n", file),
    ).toEqual([expect.stringContaining('server/node-http.ts')]);
    expect(await refusals("import http from 'http';\nvoid http;\n", file)).toHaveLength(1);
    expect(
      await refusals("import type { Server } from 'node:http';\nexport type S = Server;\n", file),
    ).toEqual([]);
  });

  it('leaves the simulator alone, which runs only in demo mode and `simulate`', async () => {
    const code = "import { createServer } from 'node:http';\nvoid createServer;\n";
    expect(await refusals(code, 'src/simulator/index.ts')).toEqual([]);
  });
});
