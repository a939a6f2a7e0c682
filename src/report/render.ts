/**
 * The report's three forms (docs/cli.md, "report"): JSON (the contract), Markdown tables, and an
 * HTML page to send to the partner: self-contained (inline SVG and style, no external asset),
 * printable, and readable without colour (every colour has a text or pattern beside it).
 */
import type { DayFigures, EnvironmentReport, Figures, Report } from './compute.js';
import { sloTable } from './slo-figures.js';
import { markdownText, plainText } from './text.js';

export const FORMATS = ['markdown', 'html', 'json'] as const;
export type Format = (typeof FORMATS)[number];

export function render(report: Report, format: Format): string {
  if (format === 'json') return JSON.stringify(report, null, 2);
  if (format === 'markdown') return markdown(report);
  return html(report);
}

const pct = (v: number | null, digits = 3): string =>
  v === null ? 'n/a' : `${(v * 100).toFixed(digits)} %`;
const sec = (v: number | null): string =>
  v === null ? 'n/a' : v < 1 ? `${Math.round(v * 1000)} ms` : `${v.toFixed(2)} s`;
const dur = (s: number): string => {
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = Math.round(s % 60);
  return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min${r ? ` ${r} s` : ''}` : `${r} s`;
};

function summaryRows(f: Figures): Array<[string, string]> {
  return [
    ['Availability', pct(f.availability)],
    ['Scheduled pings (outside maintenance)', String(f.pings)],
    ['Failed pings', String(f.failed_pings)],
    ['Maintenance left out', dur(f.maintenance_seconds)],
    [
      'Latency p50 / p95 / p99',
      [f.latency_seconds.p50, f.latency_seconds.p95, f.latency_seconds.p99].map(sec).join(' / '),
    ],
    ['Lifecycle runs', String(f.lifecycle.runs)],
    ['Lifecycle success ratio', pct(f.lifecycle.success_ratio)],
    ['Time to qualify p50 / p95', `${sec(f.qualify_seconds.p50)} / ${sec(f.qualify_seconds.p95)}`],
    ['Error budget remaining (ping availability)', pct(f.error_budget_remaining, 1)],
  ];
}

function mdTable(header: string[], rows: string[][]): string {
  const esc = markdownText;
  return [
    `| ${header.map(esc).join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

/** The tables both forms show after the summary, in order; `rows` empty: `empty` is said. */
function sections(
  env: EnvironmentReport,
): Array<{ title: string; header: string[]; rows: string[][]; empty?: string }> {
  const out: Array<{ title: string; header: string[]; rows: string[][]; empty?: string }> = [];
  if (env.objectives.length > 0) {
    out.push({
      title: 'Objectives',
      header: ['Objective', 'Target', 'Measured', 'Error budget remaining'],
      rows: env.objectives.map((o) => [
        o.name,
        pct(o.objective),
        pct(o.sli),
        pct(o.error_budget_remaining, 1),
      ]),
    });
  }
  if (env.locations) {
    out.push({
      title: 'Per location',
      header: ['Location', 'Availability', 'Pings', 'Failed', 'Latency p95', 'Incidents'],
      rows: env.locations.map((l) => [
        l.location || '(none)',
        pct(l.availability),
        String(l.pings),
        String(l.failed_pings),
        sec(l.latency_seconds.p95),
        String(l.incidents.length),
      ]),
    });
  }
  out.push(
    {
      title: 'Incidents',
      header: ['Start (UTC)', 'End (UTC)', 'Duration', 'Cause'],
      rows: env.incidents.map((i) => [
        i.start,
        i.end ?? 'ongoing',
        dur(i.duration_seconds),
        i.cause,
      ]),
      empty: 'None.',
    },
    {
      title: 'Per day',
      header: ['Date (UTC)', 'Availability', 'Pings', 'Failed', 'Latency p50', 'p95', 'p99'],
      rows: env.days.map((d) => [
        d.date,
        pct(d.availability),
        String(d.pings),
        String(d.failed_pings),
        sec(d.latency_seconds.p50),
        sec(d.latency_seconds.p95),
        sec(d.latency_seconds.p99),
      ]),
    },
  );
  return out;
}

function markdown(report: Report): string {
  const out = [`# ISA API availability report`, '', `${report.from} to ${report.to} (UTC)`];
  for (const env of report.environments) {
    out.push(
      '',
      `## ${markdownText(env.environment)}`,
      '',
      mdTable(['Figure', 'Value'], summaryRows(env)),
    );
    for (const section of sections(env)) {
      out.push('', `### ${section.title}`, '');
      out.push(
        section.rows.length === 0 && section.empty !== undefined
          ? section.empty
          : mdTable(section.header, section.rows),
      );
    }
  }
  if (report.slos && report.slos.length > 0) {
    const table = sloTable(report.slos);
    out.push('', '## Objectives of the spec', '', mdTable(table.header, table.rows), '');
    out.push(...table.notes.map((note) => `- ${markdownText(note)}`));
  }
  return `${out.join('\n')}\n`;
}

const escapeHtml = (s: string): string =>
  plainText(s).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** Below the objective's target is marked with a hatch and a "below" word, not colour alone. */
function availabilityStrip(days: DayFigures[], target: number | undefined): string {
  const w = 18;
  const h = 28;
  const width = Math.max(1, days.length) * w;
  const cells = days.map((d, i) => {
    const below = d.availability !== null && target !== undefined && d.availability < target;
    const fill = d.availability === null ? 'url(#nodata)' : below ? 'url(#below)' : '#2e7d32';
    const label = `${d.date}: ${d.availability === null ? 'no data' : pct(d.availability)}${below ? ' (below objective)' : ''}`;
    return (
      `<rect x="${i * w + 1}" y="0" width="${w - 2}" height="${h}" fill="${fill}" stroke="#333" stroke-width="0.5"><title>${escapeHtml(label)}</title></rect>` +
      (i % 7 === 0
        ? `<text x="${i * w + 1}" y="${h + 12}" font-size="9">${d.date.slice(5)}</text>`
        : '')
    );
  });
  return `<svg role="img" aria-label="Availability per day; days below the objective are hatched" viewBox="0 0 ${width} ${h + 16}" width="100%" preserveAspectRatio="xMinYMin meet">
<defs><pattern id="below" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#c62828"/><line x1="0" y1="0" x2="0" y2="6" stroke="#fff" stroke-width="2"/></pattern>
<pattern id="nodata" width="4" height="4" patternUnits="userSpaceOnUse"><rect width="4" height="4" fill="#eee"/><circle cx="2" cy="2" r="0.8" fill="#999"/></pattern></defs>
${cells.join('\n')}</svg>`;
}

/** p50, p95, p99 per day; each line has its own dash pattern and a label at its end. */
function latencyChart(days: DayFigures[]): string {
  const width = 640;
  const height = 200;
  const pad = { l: 50, r: 40, t: 10, b: 24 };
  const values = days.flatMap((d) => [
    d.latency_seconds.p50,
    d.latency_seconds.p95,
    d.latency_seconds.p99,
  ]);
  const max = Math.max(0.001, ...values.filter((v): v is number => v !== null));
  const x = (i: number) =>
    pad.l + (days.length <= 1 ? 0 : (i * (width - pad.l - pad.r)) / (days.length - 1));
  const y = (v: number) => pad.t + (1 - v / max) * (height - pad.t - pad.b);
  const lines = (['p50', 'p95', 'p99'] as const).map((key, n) => {
    const dash = ['', '6 3', '2 2'][n] ?? '';
    const pts = days
      .map((d, i) =>
        d.latency_seconds[key] === null
          ? null
          : `${x(i).toFixed(1)},${y(d.latency_seconds[key] ?? 0).toFixed(1)}`,
      )
      .filter((p): p is string => p !== null);
    const last = pts[pts.length - 1]?.split(',') ?? [String(pad.l), String(pad.t)];
    return `<polyline fill="none" stroke="#1a237e" stroke-width="1.5" ${dash ? `stroke-dasharray="${dash}"` : ''} points="${pts.join(' ')}"/><text x="${Number(last[0]) + 4}" y="${Number(last[1]) + 3}" font-size="10">${key}</text>`;
  });
  const ticks = [0, 0.5, 1].map(
    (f) =>
      `<text x="${pad.l - 4}" y="${y(max * f) + 3}" font-size="9" text-anchor="end">${escapeHtml(sec(max * f))}</text><line x1="${pad.l}" x2="${width - pad.r}" y1="${y(max * f)}" y2="${y(max * f)}" stroke="#ccc" stroke-width="0.5"/>`,
  );
  return `<svg role="img" aria-label="Ping latency per day: p50 solid, p95 dashed, p99 dotted" viewBox="0 0 ${width} ${height}" width="100%">${ticks.join('')}${lines.join('')}</svg>`;
}

function htmlTable(header: string[], rows: string[][]): string {
  return `<table><thead><tr>${header.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map(
      (r) =>
        `<tr>${r.map((c, i) => (i === 0 ? `<th scope="row">${escapeHtml(c)}</th>` : `<td>${escapeHtml(c)}</td>`)).join('')}</tr>`,
    )
    .join('')}</tbody></table>`;
}

function htmlEnvironment(env: EnvironmentReport): string {
  const target = env.objectives.find((o) => o.name === 'ping-availability')?.objective;
  const parts = [
    `<section><h2>${escapeHtml(env.environment)}</h2>`,
    htmlTable(['Figure', 'Value'], summaryRows(env)),
    `<h3>Availability per day</h3>`,
    `<p class="note">Each box is one UTC day${target === undefined ? '' : `; hatched boxes are below the ${pct(target)} objective`}; dotted boxes have no data. The table below lists each day.</p>`,
    availabilityStrip(env.days, target),
    `<h3>Ping latency per day</h3>`,
    latencyChart(env.days),
  ];
  for (const section of sections(env)) {
    parts.push(
      `<h3>${escapeHtml(section.title)}</h3>`,
      section.rows.length === 0 && section.empty !== undefined
        ? `<p>${escapeHtml(section.empty)}</p>`
        : htmlTable(section.header, section.rows),
    );
  }
  parts.push('</section>');
  return parts.join('\n');
}

function htmlSlos(report: Report): string {
  if (!report.slos || report.slos.length === 0) return '';
  const table = sloTable(report.slos);
  const notes = table.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join('');
  return `<section><h2>Objectives of the spec</h2>\n${htmlTable(table.header, table.rows)}\n<ul class="note">${notes}</ul></section>`;
}

function html(report: Report): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ISA API availability report ${escapeHtml(report.from)} to ${escapeHtml(report.to)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;color:#111;background:#fff}
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #999;padding:.2rem .5rem;text-align:left}
td{font-variant-numeric:tabular-nums}.note{color:#333;font-size:.9em}
section{margin-top:2rem}
@media print{body{max-width:none;margin:0;font-size:11pt}section{break-before:page}section:first-of-type{break-before:auto}table,svg{break-inside:avoid}}
</style></head><body>
<h1>ISA API availability report</h1>
<p>${escapeHtml(report.from)} to ${escapeHtml(report.to)} (UTC). Availability counts failed scheduled pings (server errors, timeouts, network errors, unexpected statuses or bodies) among all scheduled pings, leaving out maintenance windows.</p>
${report.environments.map(htmlEnvironment).join('\n')}
${htmlSlos(report)}
</body></html>
`;
}
