import { describe, expect, it } from 'vitest';
import { isDemoMode } from '../../src/config/index.js';

describe('isDemoMode', () => {
  it.each([
    ['no file and no variables', undefined, {}, true],
    [
      'only unrelated variables',
      undefined,
      { PATH: '/usr/bin', HOME: '/root', NODE_ENV: 'production' },
      true,
    ],
    [
      'variables that only resemble the prefix',
      undefined,
      { ISA: '1', MY_ISA_KEY: 'x', isa_monitor: 'x' },
      true,
    ],
    ['an ISA_ variable set to the empty string', undefined, { ISA_MONITOR_LOG_LEVEL: '' }, true],
    ['a config file', 'isa-monitor.yaml', {}, false],
    ['ISA_MONITOR_CONFIG', undefined, { ISA_MONITOR_CONFIG: 'isa.yaml' }, false],
    ['ISA_ENVIRONMENTS', undefined, { ISA_ENVIRONMENTS: 'production' }, false],
    ['an API key variable alone', undefined, { ISA_PRODUCTION_API_KEY: 'k' }, false],
    ['a log level override alone', undefined, { ISA_MONITOR_LOG_LEVEL: 'debug' }, false],
  ])('%s → %s', (_name, configFile, env, expected) => {
    const opts = configFile === undefined ? { env } : { configFile, env };
    expect(isDemoMode(opts)).toBe(expected);
  });
});
