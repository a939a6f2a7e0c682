/**
 * The rule-test generator: timelines, promtool's expanding notation, the exposition reader, the
 * series the real recorder writes for a scenario, and expected annotations rendered by promtool.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { CHECK_LIST } from '../../src/checks/index.js';
import type { AnyCheck } from '../../src/kernel/check.js';
import { PING_BUCKETS } from '../../src/checks/ping/index.js';
import { formatDuration, parseDuration } from '../../scripts/rules/durations.js';
import { generateRuleTests } from '../../scripts/rules/gen-rule-tests.js';
import { namesReadByRules, recordSeries } from '../../scripts/rules/recorded-series.js';
import {
  SCENARIO_RESULTS,
  expandTimeline,
  parseScenarioFile,
  type Scenario,
} from '../../scripts/rules/scenarios.js';
import {
  expandingNotation,
  expositionReader,
  parseExposition,
} from '../../scripts/rules/series-encoding.js';
import { rulesText } from './rules-file.js';

/** promtool's reading of a values string, written independently of the generator. */
function decode(text: string): Array<number | null> {
  const out: Array<number | null> = [];
  for (const token of text.split(' ')) {
    if (token === 'stale' || token === '_') {
      out.push(null);
      continue;
    }
    const blanks = /^_x(\d+)$/.exec(token);
    if (blanks) {
      for (let i = 0; i < Number(blanks[1]); i++) out.push(null);
      continue;
    }
    const m = /^(-?[\d.]+)(?:([+-])([\d.]+))?x(\d+)$/.exec(token);
    if (m) {
      const step = m[2] === undefined ? 0 : Number(`${m[2]}${m[3]}`);
      for (let i = 0; i <= Number(m[4]); i++) out.push(Number(m[1]) + i * step);
      continue;
    }
    out.push(Number(token));
  }
  return out;
}

const TARGET = { job: 'isa-monitor', instance: '127.0.0.1:9464' };

function scenario(partial: Partial<Scenario> & Pick<Scenario, 'environments'>): Scenario {
  return {
    name: 'test',
    minutes: 10,
    le_style: 'prometheus2',
    checks: [{ at: '1m', alert: 'Watchdog', firing: [] }],
    ...partial,
  };
}

const readByRules = namesReadByRules(rulesText);
const recorded = (s: Scenario, scrapeSeconds: number, target: typeof TARGET) =>
  recordSeries(s, scrapeSeconds, target, (name) => readByRules.has(name));

function series(
  list: Awaited<ReturnType<typeof recorded>>,
  metric: string,
  labels: Record<string, string> = {},
) {
  const found = list.find(
    (s) => s.metric === metric && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (!found) throw new Error(`no series ${metric} ${JSON.stringify(labels)}`);
  return found.values;
}

describe('expandTimeline', () => {
  it('repeats events and groups, then pads to the scenario length', () => {
    expect(expandTimeline('2*ok 2*(a b) c', 8, 'x')).toEqual([
      'ok',
      'ok',
      'a',
      'b',
      'a',
      'b',
      'c',
      'x',
    ]);
  });
  it('expands nested groups and cuts what runs past the end', () => {
    expect(expandTimeline('2*(a 2*(b))', 5, '-')).toEqual(['a', 'b', 'b', 'a', 'b']);
  });
  it('rejects unbalanced parentheses and a repeat without an event', () => {
    expect(() => expandTimeline('2*(a', 5, '-')).toThrow(/missing "\)"/);
    expect(() => expandTimeline('a)', 5, '-')).toThrow(/unbalanced/);
    expect(() => expandTimeline('3*', 5, '-')).toThrow(/repeat without an event/);
  });
});

describe('expandingNotation', () => {
  it('writes a counter stepping once a minute at 15 s resolution compactly', () => {
    expect(expandingNotation([0, 1, 1, 1, 1, 2, 2, 2, 2])).toBe('0 1x3 2x3');
    expect(expandingNotation([0, 1, 2, 3, 4])).toBe('0+1x4');
    expect(expandingNotation([5, 3, 1])).toBe('5-2x2');
  });
  it('writes the first missing sample after a present one as stale, the rest as blanks', () => {
    expect(expandingNotation([null, null, 1, 1, null, null, null])).toBe('_x2 1x1 stale _x2');
    expect(expandingNotation([1, null])).toBe('1 stale');
  });
  it('writes no stale marker where nothing arrived (undefined), as from an agent cut off', () => {
    expect(expandingNotation([1, 1, undefined, undefined, 1])).toBe('1x1 _x2 1');
    expect(expandingNotation([1, undefined, null])).toBe('1 _x2');
  });
  it('round-trips arbitrary sequences through promtool notation', () => {
    // A fixed pseudo-random sequence (LCG): steps, plateaus, gaps and fractional values.
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 200; round++) {
      const values: Array<number | null> = [];
      let v = 0;
      for (let i = 0; i < 60; i++) {
        const r = next();
        if (r < 0.1) values.push(null);
        else {
          if (r > 0.7) v += r > 0.9 ? 0.05 : 1;
          values.push(Number(v.toFixed(3)));
        }
      }
      const decoded = decode(expandingNotation(values)).map((x) =>
        x === null ? null : Number(x.toFixed(6)),
      );
      expect(decoded).toEqual(values);
    }
  });
});

describe('reading the exposition', () => {
  const text = [
    '# HELP m_total A counter.',
    '# TYPE m_total counter',
    'm_total{environment="prod",result="ok"} 3',
    'm_total{environment="a \\"quoted\\" \\\\ name",result="ok"} 1.5',
    'h_bucket{le="+Inf",environment="prod"} 7',
    'h_sum{environment="prod"} 0.35000000000000003',
    'g 12 1700000000000',
    '',
  ].join('\n');

  it('reads names, unescaped labels and values, including +Inf buckets and timestamps', () => {
    expect(parseExposition(text)).toEqual([
      { name: 'm_total', labels: { environment: 'prod', result: 'ok' }, value: 3 },
      { name: 'm_total', labels: { environment: 'a "quoted" \\ name', result: 'ok' }, value: 1.5 },
      { name: 'h_bucket', labels: { le: '+Inf', environment: 'prod' }, value: 7 },
      { name: 'h_sum', labels: { environment: 'prod' }, value: 0.35000000000000003 },
      { name: 'g', labels: {}, value: 12 },
    ]);
    expect(() => parseExposition('m{a="1" 2')).toThrow(/not an exposition sample line|bad labels/);
  });

  it('keeps only the names asked for and gives a series the same identity on every read', () => {
    const read = expositionReader((name) => name !== 'h_sum');
    const first = read(text);
    const second = read(text.replace('} 3', '} 4'));
    expect(first.map((s) => s.series.name)).toEqual(['m_total', 'm_total', 'h_bucket', 'g']);
    expect(second[0]?.value).toBe(4);
    expect(second[0]?.series).toBe(first[0]?.series);
  });
});

describe('the series the real recorder writes for a scenario', () => {
  let built: Awaited<ReturnType<typeof recorded>> = [];
  beforeAll(async () => {
    built = await recorded(
      scenario({
        minutes: 8,
        monitor: '6*up down absent',
        environments: {
          production: { ping: 'ok slow_warning slow_critical timeout server_error - unauthorized' },
        },
      }),
      15,
      TARGET,
    );
  });
  const env = { environment: 'production' };

  it('keeps buckets, count and attempts consistent at every scrape', () => {
    const count = series(built, 'isa_ping_duration_seconds_count', env);
    const inf = series(built, 'isa_ping_duration_seconds_bucket', { ...env, le: '+Inf' });
    expect(inf).toEqual(count);
    const attempts = built.filter((s) => s.metric === 'isa_ping_attempts_total');
    count.forEach((c, i) => {
      if (c === null) return;
      expect(attempts.reduce((sum, s) => sum + (s.values[i] ?? 0), 0)).toBe(c);
      let previous = 0;
      for (const le of PING_BUCKETS.map(String)) {
        const b = series(built, 'isa_ping_duration_seconds_bucket', { ...env, le })[i] ?? 0;
        expect(b).toBeGreaterThanOrEqual(previous);
        previous = b;
      }
    });
  });

  it('puts slow-critical pings and timeouts above le="1", slow-warning ones below it', () => {
    // At t = 345 s, the last scrape before the scrape fails: ok, 0.7 s, 2 s, timeout and
    // server error have happened; minute 5 had no ping.
    const at = 345 / 15;
    expect(series(built, 'isa_ping_duration_seconds_count', env)[at]).toBe(5);
    expect(series(built, 'isa_ping_duration_seconds_bucket', { ...env, le: '1' })[at]).toBe(3);
    expect(series(built, 'isa_ping_duration_seconds_bucket', { ...env, le: '0.5' })[at]).toBe(2);
    expect(series(built, 'isa_ping_duration_seconds_bucket', { ...env, le: '2.5' })[at]).toBe(4);
    expect(series(built, 'isa_ping_duration_seconds_bucket', { ...env, le: '30' })[at]).toBe(5);
    expect(series(built, 'isa_ping_attempts_total', { ...env, result: 'timeout' })[at]).toBe(1);
  });

  it('makes a ping visible at the first scrape after it finished', () => {
    const count = series(built, 'isa_ping_duration_seconds_count', env);
    expect(count.slice(0, 6)).toEqual([0, 1, 1, 1, 1, 2]);
    const last = series(built, 'isa_ping_last_attempt_timestamp_seconds', env);
    expect(last.slice(0, 6)).toEqual([null, 1, 1, 1, 1, 61]);
  });

  it('fails the scrape on down minutes and drops the target on absent ones', () => {
    const up = series(built, 'up');
    expect(up.slice(6 * 4, 6 * 4 + 4)).toEqual([0, 0, 0, 0]);
    expect(up.slice(7 * 4)).toEqual([null, null, null, null, null]);
    const count = series(built, 'isa_ping_duration_seconds_count', env);
    expect(count.slice(6 * 4)).toEqual(Array(9).fill(null));
  });

  it('writes Prometheus 3 bucket labels on request', async () => {
    const p3 = await recorded(
      scenario({ le_style: 'prometheus3', environments: { production: {} } }),
      15,
      TARGET,
    );
    const les = p3
      .filter((s) => s.metric === 'isa_ping_duration_seconds_bucket')
      .map((s) => s.labels['le']);
    expect(les).toContain('1.0');
    expect(les).toContain('0.5');
    expect(les).toContain('+Inf');
  });

  it('records the qualify outcome and the 410 check a lifecycle run found', async () => {
    const runs = await recorded(
      scenario({
        environments: {
          production: { lifecycle: 'qualify_timeout not_gone_after_close create_failed' },
        },
      }),
      60,
      TARGET,
    );
    const at = 3; // t = 180 s: all three runs finished
    expect(series(runs, 'isa_qualify_outcomes_total', { status: 'timeout' })[at]).toBe(1);
    expect(series(runs, 'isa_qualify_outcomes_total', { status: 'available' })[at]).toBe(1);
    expect(series(runs, 'isa_contract_checks_total', { result: 'fail' })[at]).toBe(1);
    expect(series(runs, 'isa_contract_checks_total', { result: 'pass' })[at]).toBe(1);
  });

  it('rejects unknown events', async () => {
    await expect(
      recorded(scenario({ environments: { p: { ping: 'slowish' } } }), 15, TARGET),
    ).rejects.toThrow(/unknown ping event "slowish"/);
    await expect(
      recorded(scenario({ environments: { p: { lifecycle: 'oops' } } }), 15, TARGET),
    ).rejects.toThrow(/unknown lifecycle event "oops"/);
  });
});

describe('generateRuleTests', () => {
  const options = { ruleFile: '../isa-monitor.rules.yaml', source: 'inline.yaml' };
  /** A one-scenario file with the given alert checks, all at 1m. */
  const generate = (checks: Array<{ alert: string; firing: string }>) =>
    generateRuleTests(
      `scenarios:
  - name: x
    environments: { production: {} }
    checks:
${checks.map((c) => `      - { at: 1m, alert: ${c.alert}, firing: [${c.firing}] }`).join('\n')}
`,
      rulesText,
      options,
    );

  it('renders the expected annotations from the rules', async () => {
    const text = await generate([
      {
        alert: 'IsaApiDown',
        firing: '{ environment: production, severity: warning, value: 5.13 }',
      },
    ]);
    expect(text).toContain(
      'description: 5 pings to the production ISA API in the last 10 minutes failed with a server error, a timeout or a network error.',
    );
    expect(text).toContain(
      'runbook_url: https://github.com/isa-monitor/isa-monitor/blob/main/docs/runbooks.md#isaapidown',
    );
    expect(text).toContain('severity: warning');
    expect(text).toContain('instance: 127.0.0.1:9464');
  });

  it("renders annotations with Prometheus' own humanizeDuration and humanizePercentage", async () => {
    const text = await generate([
      {
        alert: 'IsaMonitorStalled',
        firing: '{ environment: production, severity: critical, value: 434 }',
      },
      {
        alert: 'IsaQualifyTimeoutsRising',
        firing: '{ environment: production, severity: warning, value: 0.2308 }',
      },
    ]);
    expect(text).toContain('to production 7m 14s ago.');
    expect(text).toContain('description: 23.08% of the lifecycle runs');
  });

  it('names the scenario file and the key path of a bad scenario', async () => {
    await expect(
      generateRuleTests('scenarios: [{ name: x, checks: [] }]', rulesText, options),
    ).rejects.toThrow(/inline\.yaml: [\s\S]*environments/);
  });

  it('gives locations the instance they share, and refuses one shared without a location label', async () => {
    const located = (label: string) => `scenarios:
  - name: x
    locations:
      east: { instance: 'isa-monitor:9464', environments: { production: { ping: ok } } }
      west: { instance: 'isa-monitor:9464', label: ${label}, environments: { production: { ping: ok } } }
    checks: [{ at: 1m, query: up, samples: [] }]
`;
    const text = await generateRuleTests(located('target'), rulesText, options);
    const ups = [...text.matchAll(/series: '?up\{([^}]*)\}/g)].map((m) => m[1]);
    expect(ups).toEqual([
      'instance="isa-monitor:9464",job="isa-monitor",location="east"',
      'instance="isa-monitor:9464",job="isa-monitor",location="west"',
    ]);
    await expect(generateRuleTests(located('config'), rulesText, options)).rejects.toThrow(
      /share an instance need the location as a target label/,
    );
  });

  it('refuses an expectation that matches no rule', async () => {
    const text = `scenarios:
  - name: x
    environments: { production: {} }
    checks: [{ at: 1m, alert: IsaApiDown, firing: [{ environment: production, severity: none }] }]
`;
    await expect(generateRuleTests(text, rulesText, options)).rejects.toThrow(/0 rules match/);
  });
});

describe('durations', () => {
  it('parses and formats Prometheus durations in whole milliseconds', () => {
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('3d')).toBe(259_200_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(() => parseDuration('10 minutes')).toThrow(/not a Prometheus duration/);
    expect(formatDuration(2_235_000)).toBe('37m15s');
    expect(formatDuration(85_714)).toBe('1m25s714ms');
    expect(formatDuration(0)).toBe('0s');
    expect(() => formatDuration(1.5)).toThrow(/whole/);
  });
});

describe('the scenario schema', () => {
  const file = (environment: Record<string, unknown>) =>
    YAML.stringify({
      scenarios: [
        {
          name: 'keys',
          environments: { production: environment },
          checks: [{ at: '1m', alert: 'IsaApiDown' }],
        },
      ],
    });

  it("takes each registered check's timeline under its name, and the keys its folder declares", () => {
    const names = (CHECK_LIST as readonly AnyCheck[]).map((check) => check.name);
    expect(names).toEqual(expect.arrayContaining(['ping', 'lifecycle', 'tls']));
    expect(SCENARIO_RESULTS.map((s) => s.check)).toEqual(names);
    const parsed = parseScenarioFile(
      file({ ...Object.fromEntries(names.map((name) => [name, '-'])), confirm: 'ok' }),
      'keys.yaml',
    );
    expect(Object.keys(parsed.scenarios[0]?.environments['production'] ?? {})).toEqual(
      expect.arrayContaining([...names, 'confirm']),
    );
  });

  it('refuses a key no check and not the monitor declares, naming it', () => {
    expect(() => parseScenarioFile(file({ certificate: '30' }), 'keys.yaml')).toThrow(
      /keys\.yaml: .*certificate/s,
    );
  });
});
