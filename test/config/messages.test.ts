/**
 * One row per bad configuration: the YAML in, the exact problem lines out (`<path>: <message>`).
 * These messages are what users read in `validate-config`; changing one is a deliberate act.
 */
import { describe, expect, it } from 'vitest';
import { formatProblems, parseConfigText } from '../../src/config/index.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { defaultKeyUsers, keyVariableUnset } from '../support/key-users.js';

const ENV = { ISA_PRODUCTION_API_KEY: 'prod-key-1', ISA_SANDBOX_API_KEY: 'sandbox-key-2' };
const DURATION = 'must be a duration such as "1500ms", "60s", "5m" or "1h"';
const COMBINATION =
  'needs one of the address combinations the API accepts: street1 with zip, street1 with city and state, or street1 with city and zip';

/** A valid production environment with extra keys spliced in (each line indented by 4). */
function production(...extra: string[]): string {
  return [
    'environments:',
    '  - name: production',
    '    base_url: https://api.example.invalid',
    ...extra.map((line) => `    ${line}`),
  ].join('\n');
}
const ADDRESSES = 'lifecycle: { addresses: [{ street1: "123 Main St", zip: "80202" }] }';

interface Row {
  name: string;
  yaml: string;
  problems: string[];
  env?: Record<string, string>;
}

const ROWS: Row[] = [
  // --- structure -------------------------------------------------------------------------------
  {
    name: 'an empty file',
    yaml: '',
    problems: ['environments: is required: list at least one environment'],
  },
  {
    name: 'a list at the top',
    yaml: '- production\n',
    problems: ['(root): must be a mapping (got a list)'],
  },
  {
    name: 'an empty environment list',
    yaml: 'environments: []\n',
    problems: ['environments: must list at least one environment'],
  },
  {
    name: 'environments as a mapping',
    yaml: 'environments: { production: {} }\n',
    problems: ['environments: must be a list (got a mapping)'],
  },
  {
    name: 'a misspelt top-level key',
    yaml: `${production(ADDRESSES)}\nlisten: { port: 9464 }\nlog_level: debug\n`,
    problems: ['log_level: unknown key'],
  },
  {
    name: 'a misspelt key with a close match, at every level',
    yaml: [
      'environment: []',
      'listen: { hots: 127.0.0.1 }',
      'log: { levle: debug }',
      production(
        'pingg: {}',
        'thresholds: { warn: 500ms }',
        'lifecycle: { pollInterval: 2s, addresses: [{ street1: "1 A St", zip: "80202", expected: any }] }',
      ),
    ].join('\n'),
    problems: [
      'listen.hots: unknown key (did you mean "host"?)',
      'log.levle: unknown key (did you mean "level"?)',
      'environments[0].thresholds.warn: unknown key',
      'environments[0].lifecycle.addresses[0].expected: unknown key (did you mean "expect"?)',
      'environments[0].lifecycle.pollInterval: unknown key (did you mean "poll_interval"?)',
      'environments[0].pingg: unknown key (did you mean "ping"?)',
      'environment: unknown key (did you mean "environments"?)',
    ],
  },
  {
    name: 'a section that is empty in YAML',
    yaml: production(ADDRESSES, 'ping:'),
    problems: ['environments[0].ping: must be a mapping (got an empty value)'],
  },
  // --- secrets ---------------------------------------------------------------------------------
  {
    name: 'a literal api_key (its value is never repeated)',
    yaml: production(ADDRESSES, 'api_key: sk_live_literal'),
    problems: [
      'environments[0].api_key: API keys are not read from the config file: use api_key_env (the name of an environment variable) or api_key_file (the path of a file)',
    ],
  },
  {
    name: 'both key sources',
    yaml: production(ADDRESSES, 'api_key_env: ISA_PRODUCTION_API_KEY', 'api_key_file: /run/key'),
    problems: ['environments[0]: set only one of api_key_env and api_key_file'],
  },
  {
    name: 'the key pasted into api_key_env',
    yaml: production(ADDRESSES, 'api_key_env: sk_live_pasted'),
    problems: [
      'environments[0].api_key_env: must be the name of an environment variable (upper-case letters, digits and "_"), not the key itself',
    ],
  },
  {
    name: 'a number as api_key_env (not quoted back)',
    yaml: production(ADDRESSES, 'api_key_env: 12345678'),
    problems: ['environments[0].api_key_env: must be a string'],
  },
  {
    name: 'the default key variable unset',
    yaml: production(ADDRESSES),
    env: {},
    problems: [
      `environments[0].api_key_env: ${keyVariableUnset(
        'ISA_PRODUCTION_API_KEY',
        defaultKeyUsers('https://api.example.invalid'),
      )}`,
    ],
  },
  {
    name: 'a named key variable unset',
    yaml: production(ADDRESSES, 'api_key_env: PROD_KEY'),
    problems: ['environments[0].api_key_env: environment variable PROD_KEY is not set'],
  },
  {
    name: 'an empty key variable',
    yaml: production(ADDRESSES),
    env: { ISA_PRODUCTION_API_KEY: '  \n' },
    problems: ['environments[0].api_key_env: environment variable ISA_PRODUCTION_API_KEY is empty'],
  },
  {
    name: 'a key variable holding "Bearer <key>"',
    yaml: production(ADDRESSES),
    env: { ISA_PRODUCTION_API_KEY: 'Bearer abc' },
    problems: [
      'environments[0].api_key_env: environment variable ISA_PRODUCTION_API_KEY contains whitespace or control characters inside the key',
    ],
  },
  {
    name: 'a key file that does not exist',
    yaml: production(ADDRESSES, 'api_key_file: /nonexistent/isa-monitor/key'),
    problems: [
      'environments[0].api_key_file: cannot read the file named by api_key_file (its path is not shown: nothing exists there, and it may be a key pasted in its place): no such file or directory',
    ],
  },
  // --- names and URLs --------------------------------------------------------------------------
  {
    name: 'an environment name with capitals',
    yaml: 'environments:\n  - { name: Production, base_url: "https://a.invalid", lifecycle: { enabled: false } }\n',
    problems: [
      'environments[0].name: must start with a lowercase letter and contain only lowercase letters, digits, "_" and "-", at most 32 characters (got "Production")',
    ],
  },
  {
    name: 'an environment name of 33 characters',
    yaml: `environments:\n  - { name: ${'a'.repeat(33)}, base_url: "https://a.invalid", lifecycle: { enabled: false } }\n`,
    problems: [
      `environments[0].name: must start with a lowercase letter and contain only lowercase letters, digits, "_" and "-", at most 32 characters (got "${'a'.repeat(33)}")`,
    ],
  },
  {
    name: 'a missing name and base_url',
    yaml: 'environments:\n  - { lifecycle: { enabled: false } }\n',
    problems: ['environments[0].name: is required', 'environments[0].base_url: is required'],
  },
  {
    name: 'a duplicate environment name',
    yaml: [
      'environments:',
      '  - { name: sandbox, base_url: "https://a.invalid", lifecycle: { enabled: false } }',
      '  - { name: production, base_url: "https://b.invalid", lifecycle: { enabled: false } }',
      '  - { name: sandbox, base_url: "https://c.invalid", lifecycle: { enabled: false } }',
    ].join('\n'),
    problems: ['environments[2].name: duplicate environment name "sandbox"'],
  },
  {
    name: 'base URLs that are not http(s), carry credentials, a query or a fragment',
    yaml: [
      'environments:',
      '  - { name: a, base_url: "api.example.invalid", api_key_env: K, lifecycle: { enabled: false } }',
      '  - { name: b, base_url: "ftp://api.example.invalid", api_key_env: K, lifecycle: { enabled: false } }',
      '  - { name: c, base_url: "https://user:hunter2@api.example.invalid", api_key_env: K, lifecycle: { enabled: false } }',
      '  - { name: d, base_url: "https://api.example.invalid/v1?key=x#top", api_key_env: K, lifecycle: { enabled: false } }',
    ].join('\n'),
    env: { K: 'key' },
    problems: [
      'environments[0].base_url: must be an http:// or https:// URL',
      'environments[1].base_url: must be an http:// or https:// URL',
      'environments[2].base_url: must not contain a user name or password: give the API key with api_key_env or api_key_file',
      'environments[3].base_url: must not contain a query string or fragment',
    ],
  },
  // --- durations and intervals -----------------------------------------------------------------
  {
    // Any interval from 1 s to 24 h is accepted (90 s, 1.5 s and 1m30s here): only 48 h is refused.
    name: 'an interval over a day, beside 90s, 1500ms and 1m30s',
    yaml: [
      'environments:',
      '  - { name: a, base_url: "https://a.invalid", api_key_env: K, ping: { interval: 90s, timeout: 1s }, lifecycle: { enabled: false } }',
      '  - { name: b, base_url: "https://a.invalid", api_key_env: K, ping: { interval: 1500ms, timeout: 1s }, lifecycle: { enabled: false } }',
      '  - { name: c, base_url: "https://a.invalid", api_key_env: K, ping: { interval: 1m30s, timeout: 1s }, lifecycle: { enabled: false } }',
      '  - { name: d, base_url: "https://a.invalid", api_key_env: K, ping: { interval: 48h, timeout: 1s }, lifecycle: { enabled: false } }',
    ].join('\n'),
    env: { K: 'key' },
    problems: ['environments[3].ping.interval: must be at most 24h (got "48h")'],
  },
  {
    name: 'an interval under a second',
    yaml: production(ADDRESSES, 'ping: { interval: 500ms, timeout: 100ms }'),
    problems: ['environments[0].ping.interval: must be at least 1s (got "500ms")'],
  },
  {
    name: 'durations without a unit or in other spellings',
    yaml: production(
      'thresholds: { expected: 100, warning: "1.5s", critical: "2 s" }',
      'lifecycle: { timeout: 2min, addresses: [{ street1: "1 A St", zip: "80202" }] }',
    ),
    problems: [
      `environments[0].thresholds.expected: ${DURATION} (got 100)`,
      `environments[0].thresholds.warning: ${DURATION} (got "1.5s")`,
      `environments[0].thresholds.critical: ${DURATION} (got "2 s")`,
      `environments[0].lifecycle.timeout: ${DURATION} (got "2min")`,
    ],
  },
  {
    name: 'zero durations',
    yaml: `${production(ADDRESSES, 'ping: { timeout: 0s }')}\nshutdown_timeout: 0ms\n`,
    problems: [
      'shutdown_timeout: must be greater than 0',
      'environments[0].ping.timeout: must be greater than 0',
    ],
  },
  {
    name: 'a ping timeout not shorter than its interval',
    yaml: production(ADDRESSES, 'ping: { interval: 10s, timeout: 10s }'),
    problems: ['environments[0].ping.timeout: must be shorter than ping.interval (10s), got 10s'],
  },
  {
    name: 'a request timeout longer than its run timeout',
    yaml: production(
      'ping: { timeout: 5s, request_timeout: 6s }',
      'lifecycle: { request_timeout: 0s, addresses: [{ street1: "1 A St", zip: "80202" }] }',
    ),
    problems: [
      'environments[0].ping.request_timeout: must not be longer than ping.timeout (5s), got 6s',
      'environments[0].lifecycle.request_timeout: must be greater than 0',
    ],
  },
  {
    name: 'a request timeout that is not a duration',
    yaml: production(
      'lifecycle: { request_timeout: 10, addresses: [{ street1: "1 A St", zip: "80202" }] }',
    ),
    problems: [`environments[0].lifecycle.request_timeout: ${DURATION} (got 10)`],
  },
  {
    name: 'lifecycle timings out of order',
    yaml: production(
      'lifecycle:',
      '  interval: 1m',
      '  timeout: 2m',
      '  poll_interval: 3m',
      '  poll_timeout: 150s',
      '  addresses: [{ street1: "1 A St", zip: "80202" }]',
    ),
    problems: [
      'environments[0].lifecycle.timeout: must be shorter than lifecycle.interval (1m), got 2m',
      'environments[0].lifecycle.poll_interval: must be shorter than lifecycle.poll_timeout (150s), got 3m',
      'environments[0].lifecycle.poll_timeout: must be shorter than lifecycle.timeout (2m), got 150s',
    ],
  },
  {
    name: 'thresholds not strictly increasing',
    yaml: production(ADDRESSES, 'thresholds: { expected: 500ms, warning: 500ms, critical: 200ms }'),
    problems: [
      'environments[0].thresholds.warning: must be greater than thresholds.expected (500ms), got 500ms',
      'environments[0].thresholds.critical: must be greater than thresholds.warning (500ms), got 200ms',
    ],
  },
  // --- request budget --------------------------------------------------------------------------
  {
    name: 'request budgets that are zero, negative, too large or text',
    yaml: [
      'environments:',
      '  - { name: a, base_url: "https://a.invalid", api_key_env: K, request_budget_per_second: 0, lifecycle: { enabled: false } }',
      '  - { name: b, base_url: "https://a.invalid", api_key_env: K, request_budget_per_second: -1, lifecycle: { enabled: false } }',
      '  - { name: c, base_url: "https://a.invalid", api_key_env: K, request_budget_per_second: 101, lifecycle: { enabled: false } }',
      '  - { name: d, base_url: "https://a.invalid", api_key_env: K, request_budget_per_second: "1", lifecycle: { enabled: false } }',
    ].join('\n'),
    env: { K: 'key' },
    problems: [
      'environments[0].request_budget_per_second: must be greater than 0 (got 0)',
      'environments[1].request_budget_per_second: must be greater than 0 (got -1)',
      "environments[2].request_budget_per_second: must be at most 100, the API's rate limit per client IP (got 101)",
      'environments[3].request_budget_per_second: must be a number (got "1")',
    ],
  },
  {
    name: 'a budget below one request per poll',
    yaml: production(ADDRESSES, 'request_budget_per_second: 0.2'),
    problems: [
      'environments[0].request_budget_per_second: must allow one request per lifecycle.poll_interval (2s): at least 0.5, got 0.2',
    ],
  },
  {
    name: 'a budget below one request per ping when the ping is the most frequent request',
    yaml: production(
      'request_budget_per_second: 0.1',
      'ping: { interval: 3s, timeout: 2s }',
      'lifecycle: { enabled: false }',
    ),
    problems: [
      'environments[0].request_budget_per_second: must allow one request per ping.interval (3s): at least 0.334, got 0.1',
    ],
  },
  // --- addresses -------------------------------------------------------------------------------
  {
    name: 'lifecycle enabled without addresses',
    yaml: production(),
    problems: ['environments[0].lifecycle.addresses: required when lifecycle is enabled'],
  },
  {
    name: 'lifecycle enabled with an empty address list',
    yaml: production('lifecycle: { addresses: [] }'),
    problems: [
      'environments[0].lifecycle.addresses: must list at least one address when lifecycle is enabled',
    ],
  },
  {
    name: 'addresses the API would reject',
    yaml: production(
      'lifecycle:',
      '  campaign_id: ""',
      '  addresses:',
      '    - { street1: "1 A St" }',
      '    - { street1: "1 A St", city: Denver }',
      '    - { street1: "1 A St", zip: "8020" }',
      '    - { street1: "1 A St", city: Denver, state: DC }',
      '    - { street1: "1 A St", city: Denver, state: co }',
      `    - { street1: "${'x'.repeat(101)}", zip: "80202" }`,
      '    - { street1: "1 A St", street2: "", zip: "80202" }',
      '    - { zip: "80202" }',
      '    - { street1: "1 A St", zip: "80202", latitude: 39.7 }',
      '    - { street1: "1 A St", zip: "80202", expect: pending }',
    ),
    problems: [
      'environments[0].lifecycle.campaign_id: must not be empty',
      `environments[0].lifecycle.addresses[0]: ${COMBINATION}`,
      `environments[0].lifecycle.addresses[1]: ${COMBINATION}`,
      'environments[0].lifecycle.addresses[2].zip: must be 5 digits, optionally plus 4',
      'environments[0].lifecycle.addresses[3].state: is not a supported state',
      'environments[0].lifecycle.addresses[4].state: must be two uppercase letters',
      'environments[0].lifecycle.addresses[4].state: is not a supported state',
      'environments[0].lifecycle.addresses[5].street1: must be at most 100 characters',
      'environments[0].lifecycle.addresses[6].street2: must not be empty',
      'environments[0].lifecycle.addresses[7].street1: is required',
      'environments[0].lifecycle.addresses[8].latitude: unknown key',
      'environments[0].lifecycle.addresses[9].expect: must be one of available, no_service, failed, any (got "pending")',
    ],
  },
  {
    name: 'an unquoted ZIP code',
    yaml: production('lifecycle: { addresses: [{ street1: "1 A St", zip: 02134 }] }'),
    problems: [
      'environments[0].lifecycle.addresses[0].zip: must be a quoted string such as "80202": YAML reads unquoted digits as a number and drops leading zeros',
    ],
  },
  // --- top-level settings ----------------------------------------------------------------------
  {
    name: 'bad listen, log and state settings',
    yaml: `${production(ADDRESSES)}\nlisten: { host: "", port: 65536 }\nlog: { level: verbose }\nstate_file: ""\n`,
    problems: [
      'listen.host: must not be empty',
      'listen.port: must be an integer from 0 to 65535 (got 65536)',
      'state_file: must not be empty',
      'log.level: must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
    ],
  },
  {
    name: 'a port given as text',
    yaml: `${production(ADDRESSES)}\nlisten: { port: "9464" }\n`,
    problems: ['listen.port: must be an integer from 0 to 65535 (got "9464")'],
  },
  {
    name: 'booleans written as yes/no',
    yaml: production('ping: { enabled: yes }', 'lifecycle: { enabled: no }'),
    problems: [
      'environments[0].ping.enabled: must be true or false (got "yes")',
      'environments[0].lifecycle.enabled: must be true or false (got "no")',
    ],
  },
  // --- everything at once ----------------------------------------------------------------------
  {
    name: 'many problems across levels, all reported together',
    yaml: [
      'listen: { port: -1 }',
      'shutdown_timeout: soon',
      'extra: true',
      'environments:',
      '  - name: production',
      '    base_url: https://api.example.invalid',
      '    api_key: do-not-print',
      '    ping: { interval: 45s, timeout: 5s }',
      '    lifecycle:',
      '      timeout: 10m',
      '      addresses: [{ street1: "1 A St", zip: "80202", expect: sometimes }]',
      '  - name: sandbox',
      '    base_url: https://sandbox.example.invalid',
      '    api_key_env: SANDBOX_KEY',
      '    thresholds: { expected: 2s }',
      '    lifecycle: { enabled: false }',
    ].join('\n'),
    problems: [
      'listen.port: must be an integer from 0 to 65535 (got -1)',
      `shutdown_timeout: ${DURATION} (got "soon")`,
      'environments[0].lifecycle.addresses[0].expect: must be one of available, no_service, failed, any (got "sometimes")',
      'environments[0].lifecycle.timeout: must be shorter than lifecycle.interval (5m), got 10m',
      'environments[0].api_key: API keys are not read from the config file: use api_key_env (the name of an environment variable) or api_key_file (the path of a file)',
      'environments[1].thresholds.warning: must be greater than thresholds.expected (2s), got 500ms',
      'environments[1].api_key_env: environment variable SANDBOX_KEY is not set',
      'extra: unknown key',
    ],
  },
];

describe('configuration problems', () => {
  it.each(ROWS)('$name', ({ yaml, problems, env }) => {
    const result = parseConfigText(yaml, {
      checks: CHECK_LIST,
      env: env ?? ENV,
      cwd: '/srv/isa-monitor',
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(formatProblems(result.problems).split('\n')).toEqual(problems);
  });

  it('never prints a stack trace or a multi-line message', () => {
    for (const { yaml, env } of ROWS) {
      const result = parseConfigText(yaml, {
        checks: CHECK_LIST,
        env: env ?? ENV,
        cwd: '/srv/isa-monitor',
      });
      if (result.ok) continue;
      for (const problem of result.problems) {
        expect(problem.message).not.toMatch(/\n|\bat .*\(.*:\d+:\d+\)/);
      }
    }
  });
});

describe('YAML syntax problems', () => {
  it.each([
    {
      name: 'a duplicate key',
      yaml: 'listen: { port: 1 }\nlisten: { port: 2 }\n',
      problems: ['isa-monitor.yaml:2:1: Map keys must be unique'],
    },
    {
      name: 'a mapping nested on one line',
      yaml: 'environments:\n  - name: a\n    ping: interval: 1s\n',
      problems: ['isa-monitor.yaml:3:11: Nested mappings are not allowed in compact mappings'],
    },
    {
      name: 'misaligned items',
      yaml: 'listen:\n    host: a\n  port: 1\n',
      problems: ['isa-monitor.yaml:3:1: All mapping items must start at the same column'],
    },
    {
      name: 'an unterminated quote',
      yaml: 'listen:\n  host: "127.0.0.1\n',
      problems: ['isa-monitor.yaml:3:1: Missing closing "quote'],
    },
    {
      name: 'tabs as indentation',
      yaml: 'listen:\n\thost: x\n',
      problems: ['isa-monitor.yaml:2:1: Tabs are not allowed as indentation'],
    },
    {
      name: 'two documents',
      yaml: 'listen: {}\n---\nlog: {}\n',
      problems: ['isa-monitor.yaml:2:1: the file must hold a single YAML document'],
    },
    {
      name: 'an alias without its anchor',
      yaml: 'environments:\n  - *production\n',
      problems: [
        'isa-monitor.yaml: Unresolved alias (the anchor must be set before the alias): production',
      ],
    },
  ])('$name is reported with its line and column', ({ yaml, problems }) => {
    const result = parseConfigText(yaml, {
      checks: CHECK_LIST,
      env: ENV,
      source: 'isa-monitor.yaml',
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(formatProblems(result.problems).split('\n')).toEqual(problems);
  });
});
