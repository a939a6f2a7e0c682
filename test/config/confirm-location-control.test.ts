/**
 * `ping.confirm`, `location` and `control`: what a file gives, and the exact problem lines of the
 * settings that cannot work.
 */
import { describe, expect, it } from 'vitest';
import { formatProblems, parseConfigText, type MonitorConfig } from '../../src/config/index.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { pingCheck } from '../../src/checks/ping/index.js';
import { sectionOf } from '../../src/config/section.js';

const ENV = { ISA_PRODUCTION_API_KEY: 'prod-key-1' };
const ADDRESSES = 'lifecycle: { addresses: [{ street1: "123 Main St", zip: "80202" }] }';

function file(top: string[], ping: string[]): string {
  return [
    ...top,
    'environments:',
    '  - name: production',
    '    base_url: https://api.example.invalid',
    `    ${ADDRESSES}`,
    ...(ping.length > 0 ? ['    ping:', ...ping.map((line) => `      ${line}`)] : []),
  ].join('\n');
}

function load(top: string[], ping: string[] = []): MonitorConfig {
  const result = parseConfigText(file(top, ping), { checks: CHECK_LIST, env: ENV });
  if (!result.ok) throw new Error(formatProblems(result.problems));
  return result.config;
}

function problems(top: string[], ping: string[] = []): string[] {
  const result = parseConfigText(file(top, ping), { checks: CHECK_LIST, env: ENV });
  return result.ok ? [] : formatProblems(result.problems).split('\n');
}

/** The ping section of the first environment. */
function pingOf(config: MonitorConfig) {
  return sectionOf(config.environments[0]!, pingCheck);
}

describe('ping.confirm', () => {
  it('is on by default: every 10 s, a 3 min window, 3 good pings', () => {
    expect(pingOf(load([])).confirm).toEqual({
      intervalMs: 10_000,
      windowMs: 180_000,
      successes: 3,
    });
  });

  it('reads every key, and enabled: false switches it off', () => {
    const ping = ['confirm: { interval: 5s, window: 2m, successes: 2 }'];
    expect(pingOf(load([], ping)).confirm).toEqual({
      intervalMs: 5_000,
      windowMs: 120_000,
      successes: 2,
    });
    expect(pingOf(load([], ['confirm: { enabled: false }'])).confirm).toBeNull();
  });

  it('is off at its defaults when scheduled pings are as frequent as confirmation pings', () => {
    expect(pingOf(load([], ['interval: 10s', 'timeout: 2s'])).confirm).toBeNull();
  });

  it.each([
    [
      ['interval: 10s', 'timeout: 2s', 'confirm: { interval: 10s }'],
      'environments[0].ping.confirm.interval: must be shorter than ping.interval (10s), got 10s',
    ],
    [
      ['interval: 5s', 'timeout: 2s', 'confirm: { enabled: true }'],
      'environments[0].ping.confirm.interval: must be shorter than ping.interval (5s), got 10s (the default)',
    ],
    [
      ['confirm: { successes: 0 }'],
      'environments[0].ping.confirm.successes: must be a whole number of at least 1 (got 0)',
    ],
    [
      ['confirm: { successes: 1.5 }'],
      'environments[0].ping.confirm.successes: must be a whole number of at least 1 (got 1.5)',
    ],
    [
      ['confirm: { window: 5s }'],
      'environments[0].ping.confirm.window: must not be shorter than ping.confirm.interval (10s), got 5s',
    ],
    [
      ['confirm: { interval: 500ms }'],
      'environments[0].ping.confirm.interval: must be at least 1s (got "500ms")',
    ],
    [['confirm: { every: 5s }'], 'environments[0].ping.confirm.every: unknown key'],
  ])('refuses %j', (ping, problem) => {
    expect(problems([], ping)).toEqual([problem]);
  });

  it('needs a request budget that allows one request per confirmation interval', () => {
    const result = parseConfigText(
      file([], ['confirm: { interval: 2s }']).replace(
        '    base_url',
        '    request_budget_per_second: 0.2\n    base_url',
      ),
      { checks: CHECK_LIST, env: ENV },
    );
    expect(result.ok ? '' : formatProblems(result.problems)).toBe(
      'environments[0].request_budget_per_second: must allow one request per ping.confirm.interval (2s): at least 0.5, got 0.2',
    );
  });
});

describe('location', () => {
  it('is absent unless set, and read as written', () => {
    expect(load([]).location).toBeNull();
    expect(load(['location: eu-west.1']).location).toBe('eu-west.1');
  });

  it.each([['location: "eu west"'], ['location: ""'], ['location: 12']])('refuses %s', (line) => {
    expect(problems([line])[0]).toMatch(/^location: must /);
  });
});

describe('control', () => {
  it('is absent unless set; interval 30s and timeout 5s by default', () => {
    expect(load([]).control).toBeNull();
    expect(load(['control: { url: "https://example.com/" }']).control).toEqual({
      url: 'https://example.com/',
      intervalMs: 30_000,
      timeoutMs: 5_000,
    });
  });

  it.each([
    [
      'control: { url: "ftp://example.com/" }',
      'control.url: must be an http:// or https:// URL without a user name or password',
    ],
    [
      'control: { url: "https://user:pw@example.com/" }',
      'control.url: must be an http:// or https:// URL without a user name or password',
    ],
    ['control: { interval: 30s }', 'control.url: is required'],
    [
      'control: { url: "http://example.com/", interval: 5s, timeout: 5s }',
      'control.timeout: must be shorter than control.interval (5s), got 5s',
    ],
    [
      'control: { url: "http://example.com/", interval: 100ms }',
      'control.interval: must be at least 1s (got "100ms")',
    ],
  ])('refuses %s', (line, problem) => {
    expect(problems([line])).toEqual([problem]);
  });
});
