import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/compute.js';
import { render } from '../../src/report/render.js';

const figures = {
  availability: 0.99,
  pings: 2880,
  failed_pings: 29,
  maintenance_seconds: 600,
  latency_seconds: { p50: 0.05, p95: 0.2, p99: 0.9 },
  lifecycle: { runs: 288, success_ratio: 1 },
  qualify_seconds: { p50: null, p95: null },
  error_budget_remaining: -1,
  objectives: [
    { name: 'ping-availability', objective: 0.995, sli: 0.99, error_budget_remaining: -1 },
  ],
  incidents: [
    {
      start: '2026-10-01T10:00:00Z',
      end: '2026-10-01T10:29:00Z',
      duration_seconds: 1740,
      cause: 'timeout',
    },
  ],
  days: [
    {
      date: '2026-10-01',
      availability: 0.98,
      pings: 1440,
      failed_pings: 29,
      maintenance_seconds: 600,
      latency_seconds: { p50: 0.05, p95: 0.2, p99: 0.9 },
    },
    {
      date: '2026-10-02',
      availability: 1,
      pings: 1440,
      failed_pings: 0,
      maintenance_seconds: 0,
      latency_seconds: { p50: 0.05, p95: 0.1, p99: 0.2 },
    },
  ],
};
const report: Report = {
  from: '2026-10-01T00:00:00Z',
  to: '2026-10-03T00:00:00Z',
  environments: [
    {
      environment: 'production <prod>',
      ping_interval_seconds: 60,
      ...figures,
      locations: [{ location: 'fra', ...figures }],
    },
  ],
};

describe('report forms', () => {
  it('HTML is self-contained, printable, and says in words what colour shows', () => {
    const page = render(report, 'html');
    expect(page).not.toMatch(/<script|<link|(src|href)=/);
    expect(page).toContain('@media print');
    expect(page).toContain('production &lt;prod&gt;');
    expect(page).toContain('<title>2026-10-01: 98.000 % (below objective)</title>');
    expect(page).toContain('p50 solid, p95 dashed, p99 dotted');
    expect(page).toContain('<th scope="row">2026-10-01T10:00:00Z</th>');
  });

  it('Markdown is tables, with the incidents and every day', () => {
    const md = render(report, 'markdown');
    expect(md).toContain('| 2026-10-01T10:00:00Z | 2026-10-01T10:29:00Z | 29 min | timeout |');
    expect(md).toContain('| Error budget remaining (ping availability) | -100.0 % |');
    expect(md).toContain('| 2026-10-02 | 100.000 % | 1440 | 0 |');
    expect(md).toContain('### Per location');
  });

  it('label values reach Markdown and HTML as text: no controls, escapes or markup', () => {
    const hostile = 'fra\n## Injected\u001b[31m red\u001b]0;title\u0007 | *bold* [link](x)\r';
    const env = report.environments[0];
    if (env === undefined) throw new Error('fixture');
    const tampered: Report = {
      ...report,
      environments: [
        {
          ...env,
          environment: hostile,
          locations: [{ ...figures, location: hostile }],
          incidents: [{ ...figures.incidents[0]!, cause: hostile }],
        },
      ],
    };
    for (const format of ['markdown', 'html'] as const) {
      const text = render(tampered, format);
      // eslint-disable-next-line no-control-regex -- what must not be there
      expect(text.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      expect(text).not.toContain('\n## Injected');
    }
    const md = render(tampered, 'markdown');
    expect(md).toContain('## fra ## Injected red \\| \\*bold\\* \\[link\\](x)');
    expect(md).toContain('| fra ## Injected red \\| \\*bold\\* \\[link\\](x)  |');
  });

  it('JSON is the report as is', () => {
    expect(JSON.parse(render(report, 'json'))).toEqual(report);
  });
});
