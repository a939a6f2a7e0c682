/**
 * Durations that become timers are refused above 2^31 − 1 ms (596h31m23s647ms): Node's
 * `setTimeout` fires after 1 ms when given more, so a `control.interval` of 600h probed in a
 * tight loop (docs/configuration.md, "Value types"). One row per key, with its key path; the
 * limit itself is accepted.
 */
import { describe, expect, it } from 'vitest';
import { formatProblems, parseConfigText } from '../../src/config/index.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { MAX_TIMER_MS } from '../../src/config/rules.js';

const ENV = { ISA_PRODUCTION_API_KEY: 'prod-key-1' };
const LIMIT = 'must be at most 596h31m23s647ms, the longest a timer can wait';
const ADDRESSES = 'addresses: [{ street1: "123 Main St", zip: "80202" }]';

function load(yaml: string) {
  return parseConfigText(yaml, { checks: CHECK_LIST, env: ENV, cwd: '/' });
}

function file(env: string[], top: string[] = []): string {
  return [
    ...top,
    'environments:',
    '  - name: production',
    '    base_url: https://api.example.invalid',
    ...env.map((line) => `    ${line}`),
  ].join('\n');
}

const ROWS: Array<{ key: string; yaml: string; problems: string[] }> = [
  {
    key: 'control.interval',
    yaml: file(
      [`lifecycle: { ${ADDRESSES} }`],
      ['control: { url: "https://example.com/", interval: 600h }'],
    ),
    problems: [`control.interval: ${LIMIT} (got "600h")`],
  },
  {
    key: 'shutdown_timeout',
    yaml: file([`lifecycle: { ${ADDRESSES} }`], ['shutdown_timeout: 597h']),
    problems: [`shutdown_timeout: ${LIMIT} (got "597h")`],
  },
  {
    key: 'lifecycle.poll_interval and poll_timeout',
    yaml: file([`lifecycle: { poll_interval: 600h, poll_timeout: 700h, ${ADDRESSES} }`]),
    problems: [
      `environments[0].lifecycle.poll_interval: ${LIMIT} (got "600h")`,
      `environments[0].lifecycle.poll_timeout: ${LIMIT} (got "700h")`,
    ],
  },
  {
    key: 'ping.request_timeout',
    yaml: file([`lifecycle: { ${ADDRESSES} }`, 'ping: { request_timeout: 2147483648ms }']),
    problems: [`environments[0].ping.request_timeout: ${LIMIT} (got "2147483648ms")`],
  },
];

describe('durations that become timers', () => {
  it.each(ROWS)('refuses $key over the timer limit, with its key path', ({ yaml, problems }) => {
    const result = load(yaml);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(formatProblems(result.problems).split('\n')).toEqual(problems);
  });

  it('accepts the limit itself', () => {
    const result = load(
      file(
        [`lifecycle: { ${ADDRESSES} }`],
        ['control: { url: "https://example.com/", interval: 596h31m23s647ms }'],
      ),
    );
    expect(result.ok && result.config.control?.intervalMs).toBe(MAX_TIMER_MS);
  });
});
