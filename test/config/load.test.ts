import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  formatProblems,
  loadConfig,
  parseConfigText,
  validateConfigDocument,
  type LoadResult,
  type MonitorConfig,
} from '../../src/config/index.js';
import { stringify } from 'yaml';
import type { AnyCheck } from '../../src/kernel/check.js';
import { CHECK_LIST, findCheck } from '../../src/checks/index.js';
import { pingCheck } from '../../src/checks/ping/index.js';
import { parseDuration } from '../../src/config/duration.js';
import { sectionOf } from '../../src/config/section.js';
import type { ConfigFixtures } from '../../src/checks/shared/fixtures.js';
import { CHECK_FIXTURES, fileSections } from '../support/check-fixtures.js';

/** One environment, with each check's section as far as it needs one to load (its fixtures). */
const MINIMAL = stringify({
  environments: [
    {
      name: 'production',
      base_url: 'https://api.example.invalid/',
      ...fileSections((f) => f.config.minimal),
    },
  ],
});
const KEYS = { ISA_PRODUCTION_API_KEY: 'prod-key', ISA_SANDBOX_API_KEY: 'sandbox-key' };

function ok(result: LoadResult): MonitorConfig {
  if (!result.ok)
    throw new Error(`expected a valid config, got:\n${formatProblems(result.problems)}`);
  return result.config;
}

function problems(result: LoadResult): string[] {
  if (result.ok) throw new Error('expected problems, got a valid config');
  return formatProblems(result.problems).split('\n');
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'isa-config-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/**
 * What a missing API key's problem says of an environment that leaves every `enabled` out: the
 * checks on by default that send API requests, in registry order (docs/configuration.md, "API
 * keys"). The environments that name it have no https base URL.
 */
const API_USERS = ((): string => {
  const names = (CHECK_LIST as readonly AnyCheck[])
    .filter((check) => check.usesApiKey !== false)
    .filter(({ config: { defaults } }) =>
      typeof defaults.enabled === 'boolean' ? defaults.enabled : defaults.enabled({ baseUrl: '' }),
    )
    .map((check) => check.name);
  const listed =
    names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  return names.length === 1
    ? `the enabled check ${listed} sends API requests`
    : `the enabled checks ${listed} send API requests`;
})();

/** Each registered check's config as its fixtures give it, by the check's name. */
function checkConfigs(config: (c: ConfigFixtures) => object): Record<string, object> {
  return Object.fromEntries(
    CHECK_FIXTURES.map(({ check, fixtures }) => [check, config(fixtures.config)]),
  );
}

describe('defaults', () => {
  it('fills every key the file leaves out', () => {
    const config = ok(
      parseConfigText(MINIMAL, { checks: CHECK_LIST, env: KEYS, cwd: '/srv/monitor' }),
    );
    expect(config).toEqual({
      location: null,
      control: null,
      listen: { host: '0.0.0.0', port: 9464 },
      stateFile: '/srv/monitor/.isa-monitor/sessions.json',
      logLevel: 'info',
      shutdownTimeoutMs: 10_000,
      history: { windowMs: 86_400_000, runs: 100 },
      environments: [
        {
          name: 'production',
          baseUrl: 'https://api.example.invalid',
          apiKey: 'prod-key',
          apiKeySource: { kind: 'env', name: 'ISA_PRODUCTION_API_KEY' },
          thresholds: { expectedMs: 100, warningMs: 500, criticalMs: 1000 },
          requestBudgetPerSecond: 1,
          maintenance: [],
          // Each default as docs/configuration.md states it, written out in each check's fixtures.
          ...checkConfigs((c) => c.defaults),
        },
      ],
    });
  });

  it.each(CHECK_FIXTURES)(
    "gives $check the uniform defaults its section declares (docs/configuration.md's table)",
    ({ check }) => {
      const config = ok(parseConfigText(MINIMAL, { checks: CHECK_LIST, env: KEYS }));
      const [env] = config.environments;
      const section = findCheck(check)?.config;
      if (env === undefined || section === undefined) throw new Error(`no section ${check}`);
      const { defaults } = section;
      const timeoutMs = parseDuration(defaults.timeout) ?? NaN;
      expect(sectionOf(env, { name: check })).toMatchObject({
        enabled:
          typeof defaults.enabled === 'boolean'
            ? defaults.enabled
            : defaults.enabled({ baseUrl: env.baseUrl }),
        intervalMs: parseDuration(defaults.interval),
        timeoutMs,
        // Capped at the run's timeout; without a default of its own, the run's timeout.
        requestTimeoutMs: Math.min(
          parseDuration(defaults.requestTimeout ?? defaults.timeout) ?? NaN,
          timeoutMs,
        ),
      });
    },
  );

  it('reads every key the contract names, in its own units', () => {
    const config = ok(
      parseConfigText(
        stringify({
          listen: { host: '127.0.0.1', port: 0 },
          state_file: '/var/lib/isa-monitor/sessions.json',
          log: { level: 'debug' },
          shutdown_timeout: '1500ms',
          environments: [
            {
              name: 'sandbox-eu',
              base_url: 'http://127.0.0.1:8080/env/sandbox',
              api_key_env: 'SANDBOX_EU_KEY',
              thresholds: { expected: '50ms', warning: '200ms', critical: '2s' },
              request_budget_per_second: 12.5,
              // Each check's keys, in the file's spelling, from its fixtures.
              ...fileSections((f) => f.config.configured.file),
            },
          ],
        }),
        {
          checks: CHECK_LIST,
          env: { SANDBOX_EU_KEY: 'k', ISA_SANDBOX_EU_API_KEY: 'unused' },
          cwd: '/srv',
        },
      ),
    );
    expect(config.listen).toEqual({ host: '127.0.0.1', port: 0 });
    expect(config.stateFile).toBe('/var/lib/isa-monitor/sessions.json');
    expect(config.logLevel).toBe('debug');
    expect(config.shutdownTimeoutMs).toBe(1500);
    expect(config.environments[0]).toEqual({
      name: 'sandbox-eu',
      baseUrl: 'http://127.0.0.1:8080/env/sandbox',
      apiKey: 'k',
      apiKeySource: { kind: 'env', name: 'SANDBOX_EU_KEY' },
      thresholds: { expectedMs: 50, warningMs: 200, criticalMs: 2000 },
      requestBudgetPerSecond: 12.5,
      maintenance: [],
      ...checkConfigs((c) => c.configured.config),
    });
  });

  it('shares settings between environments with YAML anchors and merge keys', () => {
    const config = ok(
      parseConfigText(
        `
environments:
  - &production
    name: production
    base_url: https://a.invalid
    ping: &fast { interval: 30s, timeout: 5s }
    lifecycle: { enabled: false }
  - <<: *production
    name: sandbox
    base_url: https://b.invalid
    thresholds: { warning: 800ms }
  - { name: staging, base_url: "https://c.invalid", api_key_env: ISA_SANDBOX_API_KEY, ping: *fast, lifecycle: { enabled: false } }
`,
        { checks: CHECK_LIST, env: KEYS },
      ),
    );
    expect(
      config.environments.map((e) => [
        e.name,
        e.baseUrl,
        sectionOf(e, pingCheck).intervalMs,
        e.apiKey,
      ]),
    ).toEqual([
      ['production', 'https://a.invalid', 30_000, 'prod-key'],
      ['sandbox', 'https://b.invalid', 30_000, 'sandbox-key'],
      ['staging', 'https://c.invalid', 30_000, 'sandbox-key'],
    ]);
    expect(config.environments[1]?.thresholds.warningMs).toBe(800);
  });
});

describe('deprecated keys', () => {
  it('warn about nothing in a file without them', () => {
    const result = parseConfigText(MINIMAL, { checks: CHECK_LIST, env: KEYS });
    expect(result.ok && result.warnings).toEqual([]);
  });
});

describe('config file', () => {
  it('is read from --config, relative to the working directory', () => {
    writeFileSync(join(dir, 'isa.yaml'), MINIMAL);
    const config = ok(
      loadConfig({ checks: CHECK_LIST, configFile: 'isa.yaml', env: KEYS, cwd: dir }),
    );
    expect(config.environments.map((e) => e.name)).toEqual(['production']);
  });

  it('is named by ISA_MONITOR_CONFIG when there is no --config, and --config wins', () => {
    writeFileSync(join(dir, 'a.yaml'), MINIMAL);
    writeFileSync(join(dir, 'b.yaml'), MINIMAL.replace('production', 'sandbox'));
    const fromVar = ok(
      loadConfig({ checks: CHECK_LIST, env: { ...KEYS, ISA_MONITOR_CONFIG: join(dir, 'a.yaml') } }),
    );
    expect(fromVar.environments[0]?.name).toBe('production');
    const fromFlag = ok(
      loadConfig({
        checks: CHECK_LIST,
        configFile: join(dir, 'b.yaml'),
        env: { ...KEYS, ISA_MONITOR_CONFIG: join(dir, 'a.yaml') },
      }),
    );
    expect(fromFlag.environments[0]?.name).toBe('sandbox');
  });

  it('reports a file that cannot be read, under the name it was given', () => {
    expect(
      problems(loadConfig({ checks: CHECK_LIST, configFile: 'missing.yaml', env: KEYS, cwd: dir })),
    ).toEqual(['missing.yaml: cannot read the config file: no such file or directory']);
    expect(problems(loadConfig({ checks: CHECK_LIST, configFile: dir, env: KEYS }))).toEqual([
      `${dir}: cannot read the config file: is a directory`,
    ]);
  });

  it('reports YAML syntax errors with the file name, line and column', () => {
    writeFileSync(
      join(dir, 'bad.yaml'),
      'environments:\n  - name: a\n  - name: a\nenvironments: []\n',
    );
    expect(
      problems(loadConfig({ checks: CHECK_LIST, configFile: join(dir, 'bad.yaml'), env: KEYS })),
    ).toEqual([`${join(dir, 'bad.yaml')}:4:1: Map keys must be unique`]);
  });

  it('resolves relative state_file and api_key_file against the config file directory', () => {
    mkdirSync(join(dir, 'etc'));
    writeFileSync(join(dir, 'etc', 'key'), 'file-key\n');
    writeFileSync(
      join(dir, 'etc', 'isa.yaml'),
      `state_file: state/sessions.json
environments:
  - name: production
    base_url: https://a.invalid
    api_key_file: key
    lifecycle: { enabled: false }
`,
    );
    const config = ok(
      loadConfig({ checks: CHECK_LIST, configFile: 'etc/isa.yaml', env: {}, cwd: dir }),
    );
    expect(config.stateFile).toBe(join(dir, 'etc', 'state', 'sessions.json'));
    expect(config.environments[0]?.apiKey).toBe('file-key');
    expect(config.environments[0]?.apiKeySource).toEqual({
      kind: 'file',
      path: join(dir, 'etc', 'key'),
    });
  });

  it('refuses ISA_ENVIRONMENTS beside a file rather than ignoring one of them', () => {
    writeFileSync(join(dir, 'isa.yaml'), MINIMAL);
    const env = { ...KEYS, ISA_ENVIRONMENTS: 'sandbox' };
    expect(
      problems(loadConfig({ checks: CHECK_LIST, configFile: join(dir, 'isa.yaml'), env })),
    ).toEqual([
      'ISA_ENVIRONMENTS: cannot be combined with a config file: list the environments in the file',
    ]);
    // Text given directly (e.g. built by the check command) is not a file choice; no conflict.
    expect(parseConfigText(MINIMAL, { checks: CHECK_LIST, env }).ok).toBe(true);
  });
});

describe('ISA_MONITOR_* overrides', () => {
  const OVERRIDES = {
    ISA_MONITOR_LISTEN_HOST: '127.0.0.1',
    ISA_MONITOR_LISTEN_PORT: '19464',
    ISA_MONITOR_LOG_LEVEL: 'warn',
    ISA_MONITOR_STATE_FILE: 'run/sessions.json',
    ISA_MONITOR_SHUTDOWN_TIMEOUT: '3s',
  };

  it('win over the file, and a relative state file from a variable is relative to the working directory', () => {
    writeFileSync(
      join(dir, 'isa.yaml'),
      `${MINIMAL}listen: { host: 0.0.0.0, port: 9464 }\nlog: { level: debug }\nstate_file: /elsewhere.json\nshutdown_timeout: 20s\n`,
    );
    const cwd = join(dir, 'work');
    const config = ok(
      loadConfig({
        checks: CHECK_LIST,
        configFile: join(dir, 'isa.yaml'),
        env: { ...KEYS, ...OVERRIDES },
        cwd,
      }),
    );
    expect(config.listen).toEqual({ host: '127.0.0.1', port: 19464 });
    expect(config.logLevel).toBe('warn');
    expect(config.stateFile).toBe(join(cwd, 'run', 'sessions.json'));
    expect(config.shutdownTimeoutMs).toBe(3000);
  });

  it('are ignored when empty, as in a FOO= line of an env file', () => {
    const empty = Object.fromEntries(Object.keys(OVERRIDES).map((k) => [k, '']));
    const config = ok(parseConfigText(MINIMAL, { checks: CHECK_LIST, env: { ...KEYS, ...empty } }));
    expect(config.listen.port).toBe(9464);
    expect(config.logLevel).toBe('info');
  });

  it('report invalid values under the variable name', () => {
    const env = {
      ...KEYS,
      ISA_MONITOR_LISTEN_PORT: 'http',
      ISA_MONITOR_LOG_LEVEL: 'loud',
      ISA_MONITOR_SHUTDOWN_TIMEOUT: '10',
    };
    expect(problems(parseConfigText(MINIMAL, { checks: CHECK_LIST, env }))).toEqual([
      'ISA_MONITOR_LISTEN_PORT: must be an integer from 0 to 65535 (got "http")',
      'ISA_MONITOR_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
      'ISA_MONITOR_SHUTDOWN_TIMEOUT: must be a duration such as "1500ms", "60s", "5m" or "1h" (got "10")',
    ]);
    expect(
      problems(
        parseConfigText(MINIMAL, {
          checks: CHECK_LIST,
          env: { ...KEYS, ISA_MONITOR_LISTEN_PORT: '70000' },
        }),
      ),
    ).toEqual(['ISA_MONITOR_LISTEN_PORT: must be an integer from 0 to 65535 (got 70000)']);
  });

  it('leave a section that is not a mapping to its own problem', () => {
    expect(
      problems(
        parseConfigText(`${MINIMAL}listen: 9464\n`, {
          checks: CHECK_LIST,
          env: { ...KEYS, ISA_MONITOR_LISTEN_PORT: '1' },
        }),
      ),
    ).toEqual(['listen: must be a mapping (got 9464)']);
  });
});

describe('configuration from environment variables only', () => {
  it('builds one environment per name with the documented defaults', () => {
    const env = {
      ISA_ENVIRONMENTS: 'production, sandbox-eu',
      ISA_PRODUCTION_BASE_URL: 'https://api.example.invalid',
      ISA_PRODUCTION_API_KEY: 'prod-key',
      ISA_SANDBOX_EU_BASE_URL: 'https://sandbox.example.invalid/',
      ISA_SANDBOX_EU_API_KEY_FILE: join(dir, 'sandbox-key'),
      ISA_MONITOR_LISTEN_PORT: '0',
    };
    writeFileSync(join(dir, 'sandbox-key'), 'sandbox-key\n');
    const config = ok(loadConfig({ checks: CHECK_LIST, env, cwd: dir }));
    expect(config.listen.port).toBe(0);
    expect(config.stateFile).toBe(join(dir, '.isa-monitor', 'sessions.json'));
    expect(config.environments).toHaveLength(2);
    const [production, sandbox] = config.environments;
    expect(production).toMatchObject({
      name: 'production',
      baseUrl: 'https://api.example.invalid',
      apiKey: 'prod-key',
      apiKeySource: { kind: 'env', name: 'ISA_PRODUCTION_API_KEY' },
      ping: { enabled: true, intervalMs: 60_000, timeoutMs: 10_000 },
      lifecycle: {
        enabled: true,
        intervalMs: 300_000,
        addresses: [{ street1: '123 Main St', zip: '80202', expect: 'any' }],
      },
    });
    expect(sandbox).toMatchObject({
      name: 'sandbox-eu',
      baseUrl: 'https://sandbox.example.invalid',
      apiKey: 'sandbox-key',
      apiKeySource: { kind: 'file', path: join(dir, 'sandbox-key') },
    });
  });

  it('reports problems under the variable names', () => {
    const env = {
      ISA_ENVIRONMENTS: 'production,Sandbox,production',
      ISA_PRODUCTION_BASE_URL: 'api.example.invalid',
      ISA_SANDBOX_API_KEY: 'k',
      ISA_SANDBOX_API_KEY_FILE: '/run/secrets/sandbox',
    };
    expect(problems(loadConfig({ checks: CHECK_LIST, env, cwd: dir }))).toEqual([
      'ISA_SANDBOX_API_KEY_FILE: cannot be combined with ISA_SANDBOX_API_KEY: set only one of them',
      'ISA_PRODUCTION_BASE_URL: must be an http:// or https:// URL',
      `ISA_PRODUCTION_API_KEY: environment variable ISA_PRODUCTION_API_KEY is not set; ${API_USERS}`,
      'ISA_ENVIRONMENTS: must start with a lowercase letter and contain only lowercase letters, digits, "_" and "-", at most 32 characters (got "Sandbox")',
      'ISA_SANDBOX_BASE_URL: is required',
      'ISA_PRODUCTION_BASE_URL: must be an http:// or https:// URL',
      `ISA_PRODUCTION_API_KEY: environment variable ISA_PRODUCTION_API_KEY is not set; ${API_USERS}`,
      'ISA_ENVIRONMENTS: duplicate environment name "production"',
    ]);
  });

  it('needs at least one name', () => {
    expect(problems(loadConfig({ checks: CHECK_LIST, env: { ISA_ENVIRONMENTS: ' , ' } }))).toEqual([
      'ISA_ENVIRONMENTS: must list at least one environment',
    ]);
  });

  it('says how to configure when neither a file nor ISA_ENVIRONMENTS is given', () => {
    expect(
      problems(loadConfig({ checks: CHECK_LIST, env: { ISA_MONITOR_LOG_LEVEL: 'debug' } })),
    ).toEqual([
      '(config): no configuration: pass --config FILE, set ISA_MONITOR_CONFIG, or set ISA_ENVIRONMENTS (demo mode starts only when no ISA_* variable is set)',
    ]);
  });
});

describe('validateConfigDocument', () => {
  it('validates a document built in code with the same rules', () => {
    const result = validateConfigDocument(
      {
        environments: [
          {
            name: 'adhoc',
            base_url: 'https://a.invalid',
            api_key_env: 'K',
            lifecycle: { enabled: false },
          },
        ],
      },
      { checks: CHECK_LIST, env: { K: 'key' } },
    );
    expect(ok(result).environments[0]?.apiKey).toBe('key');
    expect(
      problems(
        validateConfigDocument(
          { environments: [{ name: 'adhoc' }] },
          { checks: CHECK_LIST, env: {} },
        ),
      ),
    ).toEqual([
      'environments[0].base_url: is required',
      'environments[0].lifecycle.addresses: required when lifecycle is enabled',
      `environments[0].api_key_env: environment variable ISA_ADHOC_API_KEY is not set; ${API_USERS}`,
    ]);
  });
});
