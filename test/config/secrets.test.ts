import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  formatProblems,
  loadConfig,
  parseConfigText,
  validateConfigDocument,
} from '../../src/config/index.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { environment, problems } from './helpers.js';
import type { AnyCheck } from '../../src/kernel/check.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'isa-secrets-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('API key from an environment variable', () => {
  it('uses ISA_<NAME>_API_KEY when no source is named, upper-cased with - as _', () => {
    const result = parseConfigText(
      'environments:\n  - { name: sandbox-eu-2, base_url: "https://a.invalid", lifecycle: { enabled: false } }\n',
      { checks: CHECK_LIST, env: { ISA_SANDBOX_EU_2_API_KEY: 'eu-key' } },
    );
    expect(result.ok && result.config.environments[0]).toMatchObject({
      apiKey: 'eu-key',
      apiKeySource: { kind: 'env', name: 'ISA_SANDBOX_EU_2_API_KEY' },
    });
  });

  it('trims surrounding whitespace, such as the newline of $(cat key)', () => {
    const result = parseConfigText(environment('api_key_env: PROD_KEY'), {
      checks: CHECK_LIST,
      env: { PROD_KEY: '  prod-key\n' },
    });
    expect(result.ok && result.config.environments[0]?.apiKey).toBe('prod-key');
  });
});

describe('API key from a file', () => {
  it('reads the file, trims it, and records the absolute path as the source', () => {
    writeFileSync(join(dir, 'production-key'), 'file-key\r\n');
    const result = parseConfigText(environment('api_key_file: production-key'), {
      checks: CHECK_LIST,
      env: {},
      cwd: dir,
    });
    expect(result.ok && result.config.environments[0]).toMatchObject({
      apiKey: 'file-key',
      apiKeySource: { kind: 'file', path: join(dir, 'production-key') },
    });
  });

  it('reads through the injected readFile', () => {
    const asked: string[] = [];
    const readFile = (path: string) => {
      asked.push(path);
      return 'injected-key';
    };
    const result = parseConfigText(environment('api_key_file: /run/secrets/isa'), {
      checks: CHECK_LIST,
      env: {},
      readFile,
    });
    expect(result.ok && result.config.environments[0]?.apiKey).toBe('injected-key');
    expect(asked).toEqual(['/run/secrets/isa']);
  });

  it.each([
    ['an empty file', '\n\n', 'is empty'],
    [
      'a file with two lines',
      'line-one\nline-two\n',
      'contains whitespace or control characters inside the key',
    ],
  ])('refuses %s', (_name, content, message) => {
    const path = join(dir, 'bad-key');
    writeFileSync(path, content);
    expect(
      problems(
        parseConfigText(environment(`api_key_file: ${path}`), { checks: CHECK_LIST, env: {} }),
      ),
    ).toEqual([`environments[0].api_key_file: file ${path} ${message}`]);
  });

  it('reports a file it may not read by the error code', () => {
    const denied = () => {
      throw Object.assign(new Error('EACCES: permission denied, open'), { code: 'EACCES' });
    };
    expect(
      problems(
        parseConfigText(environment(`api_key_file: ${dir}`), {
          checks: CHECK_LIST,
          env: {},
          readFile: denied,
        }),
      ),
    ).toEqual([`environments[0].api_key_file: cannot read ${dir}: permission denied`]);
  });

  it('reports a directory given as the key file', () => {
    expect(
      problems(
        parseConfigText(environment(`api_key_file: ${dir}`), { checks: CHECK_LIST, env: {} }),
      ),
    ).toEqual([`environments[0].api_key_file: cannot read ${dir}: is a directory`]);
  });
});

describe('secret values never appear in problems', () => {
  const SECRETS = [
    'sk_live_LITERAL_IN_YAML',
    'sk_live_pasted_into_api_key_env',
    '31415926535',
    'hunter2-password',
    'two words',
    'first-line',
    'SECRET_IN_ENV_ZZZ',
  ];

  it('in any message or path, whatever goes wrong', () => {
    writeFileSync(join(dir, 'two-line-key'), 'first-line\nsecond-line\n');
    const cases: { yaml: string; env: Record<string, string> }[] = [
      { yaml: environment('api_key: sk_live_LITERAL_IN_YAML'), env: {} },
      { yaml: environment('apiKey: sk_live_LITERAL_IN_YAML'), env: {} },
      { yaml: environment('token: sk_live_LITERAL_IN_YAML'), env: {} },
      { yaml: environment('api_key_env: sk_live_pasted_into_api_key_env'), env: {} },
      { yaml: environment('api_key_env: 31415926535'), env: {} },
      { yaml: environment('api_key_file: 31415926535'), env: {} },
      { yaml: environment('api_key_env: [sk_live_pasted_into_api_key_env]'), env: {} },
      { yaml: environment(`api_key_file: ${join(dir, 'two-line-key')}`), env: {} },
      { yaml: environment(), env: { ISA_PRODUCTION_API_KEY: 'two words' } },
      {
        yaml: environment('api_key_env: K', 'api_key_file: /x'),
        env: { K: 'SECRET_IN_ENV_ZZZ' },
      },
      {
        yaml: 'environments:\n  - { name: production, base_url: "https://u:hunter2-password@a.invalid", api_key_env: K }\n',
        env: { K: 'SECRET_IN_ENV_ZZZ' },
      },
      {
        yaml: 'environments:\n  - { name: production, base_url: "https://a.invalid", api_key_env: K, ping: { interval: 45s } }\n',
        env: { K: 'SECRET_IN_ENV_ZZZ' },
      },
    ];
    for (const { yaml, env } of cases) {
      const result = parseConfigText(yaml, { checks: CHECK_LIST, env });
      expect(result.ok, yaml).toBe(false);
      const text = result.ok ? '' : formatProblems(result.problems);
      for (const secret of SECRETS) expect(text, yaml).not.toContain(secret);
    }
  });

  it('in problems about variables of a configuration without a file', () => {
    const result = loadConfig({
      checks: CHECK_LIST,
      env: {
        ISA_ENVIRONMENTS: 'production',
        ISA_PRODUCTION_BASE_URL: 'https://u:hunter2-password@a.invalid',
        ISA_PRODUCTION_API_KEY: 'two words',
      },
    });
    const text = result.ok ? '' : formatProblems(result.problems);
    expect(text).toContain('ISA_PRODUCTION_API_KEY');
    for (const secret of SECRETS) expect(text).not.toContain(secret);
  });
});

describe('an environment whose enabled checks send no API request', () => {
  // Enabled: exactly the checks that send no API request (the tls check among them).
  const keyless = (CHECK_LIST as readonly AnyCheck[]).filter((c) => c.usesApiKey === false);
  const users = (CHECK_LIST as readonly AnyCheck[]).filter((c) => c.usesApiKey !== false);
  const document = (extra: Record<string, unknown> = {}) => ({
    environments: [
      {
        name: 'production',
        base_url: 'https://api.example.invalid',
        ...Object.fromEntries(CHECK_LIST.map((c) => [c.name, { enabled: c.usesApiKey === false }])),
        ...extra,
      },
    ],
  });

  it('knows checks of both kinds', () => {
    expect(keyless.map((c) => c.name)).toContain('tls');
    expect(users.map((c) => c.name)).toEqual(expect.arrayContaining(['ping', 'lifecycle']));
  });

  it('needs no key: without a source and with the default variable unset, it has none', () => {
    const result = validateConfigDocument(document(), { checks: CHECK_LIST, env: {} });
    if (!result.ok) throw new Error(formatProblems(result.problems));
    expect(result.config.environments[0]).toMatchObject({ apiKey: null, apiKeySource: null });
  });

  it('still reads the default variable when it is set', () => {
    const result = validateConfigDocument(document(), {
      checks: CHECK_LIST,
      env: { ISA_PRODUCTION_API_KEY: 'prod-key' },
    });
    if (!result.ok) throw new Error(formatProblems(result.problems));
    expect(result.config.environments[0]).toMatchObject({
      apiKey: 'prod-key',
      apiKeySource: { kind: 'env', name: 'ISA_PRODUCTION_API_KEY' },
    });
  });

  it('still refuses a named source that cannot be read', () => {
    const result = validateConfigDocument(document({ api_key_env: 'PROD_KEY' }), {
      checks: CHECK_LIST,
      env: {},
    });
    expect(problems(result)).toEqual([
      'environments[0].api_key_env: environment variable PROD_KEY is not set',
    ]);
  });

  it('needs the key again once a check that sends API requests is enabled, and names it', () => {
    const [user] = users;
    if (!user) throw new Error('no check sends API requests');
    const result = validateConfigDocument(document({ [user.name]: { enabled: true } }), {
      checks: CHECK_LIST,
      env: {},
    });
    expect(problems(result)).toEqual([
      `environments[0].api_key_env: environment variable ISA_PRODUCTION_API_KEY is not set; the enabled check ${user.name} sends API requests`,
    ]);
  });
});
