/**
 * A lifecycle run that cannot fit its deadline under the request budget is warned about, with the
 * arithmetic (docs/configuration.md, "Request budget"): the configuration in which 54 of 108
 * lifecycle runs failed against a healthy simulator, and the defaults, which fit.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { validateConfigCommand } from '../../src/cli/validate-config.js';
import { CHECK_LIST } from '../../src/checks/index.js';

const ENV = { ISA_SANDBOX_API_KEY: 'sandbox-key-0123456789' };

function config(environment: string): string {
  return `environments:
  - name: sandbox
    base_url: https://sandbox.example.invalid
${environment
  .split('\n')
  .map((line) => `    ${line}`)
  .join('\n')}
`;
}

const TIGHT = config(`request_budget_per_second: 2
ping: { interval: 1s, timeout: 800ms }
lifecycle:
  interval: 5s
  timeout: 4500ms
  poll_interval: 500ms
  poll_timeout: 3500ms
  addresses: [{ street1: 2 Pending Ave, zip: "80202" }]`);

const DEFAULTS = config(`lifecycle:
  addresses: [{ street1: 2 Pending Ave, zip: "80202" }]`);

function load(text: string) {
  return loadConfig({ checks: CHECK_LIST, configFile: 'c.yaml', env: ENV, readFile: () => text });
}

describe('the lifecycle under the request budget', () => {
  // The run's deadline is its timeout, or one request timeout (here the timeout) plus a second.
  it('warns, with the arithmetic, when the budget leaves a run too little time', () => {
    const loaded = load(TIGHT);
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.warnings).toEqual([
      {
        path: 'environments[0].lifecycle.timeout',
        message:
          'a lifecycle run may need longer than its 5.5s deadline: poll_timeout 3500ms + 5 requests at the 1.02/s the budget leaves (request_budget_per_second 2 × 1.01 - 1/s kept for pings) = 8.4s; its runs would end as "budget". Raise request_budget_per_second to at least 3.47, or lifecycle.timeout to at least 8.5s, or lengthen ping.interval',
      },
    ]);
  });

  it('says nothing at the defaults: 90 s of polls and 5 requests fit the 120 s deadline', () => {
    const loaded = load(DEFAULTS);
    expect(loaded.ok && loaded.warnings).toEqual([]);
  });

  it('says nothing once the budget the warning names is configured', () => {
    const loaded = load(
      TIGHT.replace('request_budget_per_second: 2', 'request_budget_per_second: 3.47'),
    );
    expect(loaded.ok && loaded.warnings).toEqual([]);
  });

  it('is printed by validate-config, which still exits 0', () => {
    const out: string[] = [];
    const err: string[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'isa-budget-fit-'));
    writeFileSync(join(dir, 'tight.yaml'), TIGHT);
    const code = validateConfigCommand(['--config', 'tight.yaml'], {
      out: (line: string) => void out.push(line),
      err: (line: string) => void err.push(line),
      env: ENV,
      cwd: dir,
    } as never);
    expect({ code, out }).toEqual({ code: 0, out: ['tight.yaml: valid (environments: sandbox)'] });
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(
      /^warning: environments\[0\]\.lifecycle\.timeout: a lifecycle run may need/,
    );
  });
});
