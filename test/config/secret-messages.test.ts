/**
 * Every message about a secret-bearing key is safe whatever the user pasted (finding 4 of the
 * "check and the daemon share one ledger" issue): a key pasted where a file path belongs was
 * printed as "cannot read …/<the key>", and a key in upper case passed as a variable name and was
 * printed as "environment variable <the key> is not set".
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatProblems, parseConfigText } from '../../src/config/index.js';
import { describeVariable } from '../../src/config/secrets.js';
import { CHECK_LIST } from '../../src/checks/index.js';

const dir = mkdtempSync(join(tmpdir(), 'isa-secret-messages-'));
writeFileSync(join(dir, 'empty-key'), '\n');

function environment(line: string): string {
  return [
    'environments:',
    '  - name: production',
    '    base_url: https://api.example.invalid',
    '    lifecycle: { enabled: false }',
    `    ${line}`,
  ].join('\n');
}

function messages(yaml: string, env: NodeJS.ProcessEnv = {}): string {
  const result = parseConfigText(yaml, { checks: CHECK_LIST, env, cwd: dir });
  expect(result.ok).toBe(false);
  return result.ok ? '' : formatProblems(result.problems);
}

describe('a key pasted where a key file path belongs is never printed', () => {
  it.each([
    ['a lower-case key', 'sk_live_4f9a8b7c6d5e4f3a'],
    ['an upper-case key', 'SK4F9A8B7C6D5E4F3A2B1C0D'],
    ['a key with slashes and plus signs', 'abc/DEF+ghi/123=='],
    ['a key relative to a directory that exists', 'a1b2c3d4e5f6a7b8c9d0'],
    ['a key below an existing directory', `${dir}/q9w8e7r6t5y4u3i2o1p0`],
  ])('%s', (_what, key) => {
    const text = messages(environment(`api_key_file: "${key}"`));
    expect(text).not.toContain(key);
    expect(text).toContain('api_key_file');
    expect(text).toContain('no such file or directory');
  });

  it('still names a real file that is wrong', () => {
    expect(messages(environment(`api_key_file: ${join(dir, 'empty-key')}`))).toContain(
      join(dir, 'empty-key'),
    );
  });
});

describe('a key pasted where a variable name belongs is never printed', () => {
  it.each([
    ['an upper-case key', 'SK4F9A8B7C6D5E4F3A2B1C0D'],
    ['an upper-case key with underscores', 'SK_LIVE_4F9A8B7C6D5E4F3A'],
    ['digits only', '31415926535897'],
    ['a long run of letters', 'ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEF'],
  ])('%s', (_what, key) => {
    const text = messages(environment(`api_key_env: "${key}"`));
    expect(text).not.toContain(key);
    expect(text).toContain('api_key_env');
  });

  it('a key that is the value of another variable', () => {
    const key = 'ISA_LOOKS_LIKE_A_NAME';
    const text = messages(environment(`api_key_env: ${key}`), { OTHER: key });
    expect(text).not.toContain(key);
  });

  it.each([
    ['ISA_PRODUCTION_API_KEY', 'environment variable ISA_PRODUCTION_API_KEY'],
    ['MY_KEY_V2', 'environment variable MY_KEY_V2'],
    ['ISA_EU1_KEY', 'environment variable ISA_EU1_KEY'],
  ])('still names a conventional variable %s', (name, expected) => {
    expect(describeVariable(name, {})).toBe(expected);
    expect(messages(environment(`api_key_env: ${name}`))).toContain(`${expected} is not set`);
  });
});
