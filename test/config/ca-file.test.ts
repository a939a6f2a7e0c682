import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, parseConfigText } from '../../src/config/index.js';
import { generateCertificates } from '../../src/simulator/certificates.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { environment, problems } from './helpers.js';
import { defaultKeyUsers, keyVariableUnset } from '../support/key-users.js';

const ENV = { ISA_PRODUCTION_API_KEY: 'prod-key' };

let dir: string;
let caPem: string;
let otherCaPem: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'isa-ca-file-'));
  caPem = (await generateCertificates()).caPem;
  otherCaPem = (await generateCertificates()).caPem;
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('environments[].ca_file', () => {
  it('is absent unless set', () => {
    const result = parseConfigText(environment(), { checks: CHECK_LIST, env: ENV });
    expect(result.ok).toBe(true);
    expect(result.ok && result.config.environments[0]?.extraTrust).toBeUndefined();
  });

  it('reads every certificate of the file, relative to the config file, with its absolute path', () => {
    writeFileSync(join(dir, 'partner-ca.pem'), `# partner CAs\n${caPem}${otherCaPem}`);
    writeFileSync(join(dir, 'isa-monitor.yaml'), environment('ca_file: partner-ca.pem'));
    const result = loadConfig({
      checks: CHECK_LIST,
      configFile: join(dir, 'isa-monitor.yaml'),
      env: ENV,
    });
    expect(result.ok).toBe(true);
    const trust = result.ok ? result.config.environments[0]?.extraTrust : undefined;
    expect(trust?.caFile).toBe(join(dir, 'partner-ca.pem'));
    expect(trust?.certificates).toEqual([caPem.trim(), otherCaPem.trim()]);
  });

  it('is a problem with its key path when the file does not exist', () => {
    const missing = join(dir, 'nowhere', 'ca.pem');
    expect(
      problems(
        parseConfigText(environment(`ca_file: ${missing}`), { checks: CHECK_LIST, env: ENV }),
      ),
    ).toEqual([`environments[0].ca_file: cannot read ${missing}: no such file or directory`]);
  });

  it('is a problem when the file holds no PEM certificate', () => {
    writeFileSync(join(dir, 'not-a-ca.pem'), 'just some text\n');
    expect(
      problems(
        parseConfigText(environment('ca_file: not-a-ca.pem'), {
          checks: CHECK_LIST,
          env: ENV,
          cwd: dir,
        }),
      ),
    ).toEqual([
      `environments[0].ca_file: file ${join(dir, 'not-a-ca.pem')} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    ]);
  });

  it('is a problem when a certificate block does not parse', () => {
    writeFileSync(
      join(dir, 'broken.pem'),
      `${caPem}-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n`,
    );
    expect(
      problems(
        parseConfigText(environment('ca_file: broken.pem'), {
          checks: CHECK_LIST,
          env: ENV,
          cwd: dir,
        }),
      ),
    ).toEqual([
      `environments[0].ca_file: file ${join(dir, 'broken.pem')}: certificate 2 of 2 is not a valid X.509 certificate`,
    ]);
  });

  it('is reported together with every other problem', () => {
    const missing = join(dir, 'missing.pem');
    expect(
      problems(
        parseConfigText(environment(`ca_file: ${missing}`, 'request_budget_per_second: 0'), {
          checks: CHECK_LIST,
          env: {},
        }),
      ),
    ).toEqual(
      expect.arrayContaining([
        `environments[0].ca_file: cannot read ${missing}: no such file or directory`,
        `environments[0].api_key_env: ${keyVariableUnset(
          'ISA_PRODUCTION_API_KEY',
          defaultKeyUsers('https://api.example.invalid', ['lifecycle']),
        )}`,
        expect.stringMatching(/^environments\[0\]\.request_budget_per_second: /),
      ]),
    );
  });

  it('comes from ISA_<NAME>_CA_FILE without a file, its problems reported under the variable', () => {
    writeFileSync(join(dir, 'env-ca.pem'), caPem);
    const env = {
      ISA_ENVIRONMENTS: 'production',
      ISA_PRODUCTION_BASE_URL: 'https://api.example.invalid',
      ISA_PRODUCTION_API_KEY: 'prod-key',
    };
    const good = loadConfig({
      checks: CHECK_LIST,
      env: { ...env, ISA_PRODUCTION_CA_FILE: 'env-ca.pem' },
      cwd: dir,
    });
    expect(good.ok && good.config.environments[0]?.extraTrust?.certificates).toEqual([
      caPem.trim(),
    ]);
    const bad = loadConfig({
      checks: CHECK_LIST,
      env: { ...env, ISA_PRODUCTION_CA_FILE: 'none.pem' },
      cwd: dir,
    });
    expect(problems(bad)).toEqual([
      `ISA_PRODUCTION_CA_FILE: cannot read ${join(dir, 'none.pem')}: no such file or directory`,
    ]);
  });
});
