/**
 * deploy/prometheus/prometheus.yml: promtool accepts it (rule files included), it scrapes the
 * daemon as job isa-monitor every 15 s, loads the real rules and sends alerts to Alertmanager.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { REPO_ROOT } from '../../scripts/rules/gen-rule-tests.js';
import { RULES_FILE } from './rules-file.js';
import { runTool } from './tools.js';

const CONFIG = join(REPO_ROOT, 'deploy/prometheus/prometheus.yml');

interface PrometheusConfig {
  global: Record<string, string>;
  rule_files: string[];
  alerting: { alertmanagers: Array<{ static_configs: Array<{ targets: string[] }> }> };
  scrape_configs: Array<{
    job_name: string;
    scrape_interval?: string;
    static_configs: Array<{ targets: string[] }>;
  }>;
}

describe('prometheus.yml', () => {
  it('passes promtool check config, including the rule files it loads', async () => {
    const result = await runTool('promtool', ['check', 'config', CONFIG]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/SUCCESS: 1 rule files found/);
    expect(result.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('scrapes the daemon as job isa-monitor every 15 s, loads the real rules, alerts Alertmanager', async () => {
    const config = YAML.parse(await readFile(CONFIG, 'utf8')) as PrometheusConfig;
    const job = config.scrape_configs.find((j) => j.job_name === 'isa-monitor');
    expect(job?.scrape_interval ?? config.global['scrape_interval']).toBe('15s');
    expect(job?.static_configs.flatMap((s) => s.targets)).toEqual(['127.0.0.1:9464']);
    expect(config.global['evaluation_interval']).toBe('15s');
    expect(config.rule_files.map((f) => resolve(dirname(CONFIG), f))).toEqual([RULES_FILE]);
    expect(config.alerting.alertmanagers[0]?.static_configs[0]?.targets).toEqual([
      '127.0.0.1:9093',
    ]);
  });
});
