/**
 * One environment's record from `/api/uptime`: the 24 h / 7 d / 30 d / 90 d uptime, a strip of a
 * cell per day coloured by availability (its figures on hover and on keyboard focus; the arrow
 * keys move along it, one tab stop for the whole strip), and the incidents, the latest first.
 */
import { el, replaceKeepingFocus, visible } from './dom.js';
import { duration, percent } from './format.js';
import type { UptimeDay, UptimeEnvironment, UptimeIncident } from './types.js';

/** Incidents listed; the rest are counted and left to `/api/uptime`. */
const MAX_INCIDENTS = 10;

const WINDOWS = [
  ['24h', '24 h'],
  ['7d', '7 d'],
  ['30d', '30 d'],
  ['90d', '90 d'],
] as const;

/** The availability band of a day: the cell's colour, and its height for days below 99.5 %. */
function band(availability: number | null): string {
  if (availability === null) return 'none';
  if (availability >= 0.9995) return 'full';
  if (availability >= 0.995) return 'ok';
  if (availability >= 0.99) return 'warn';
  return 'bad';
}

/** `Wed 26 Nov` (UTC: the record's days are UTC days). */
function dayName(date: string): string {
  return new Date(`${date}T00:00:00Z`).toLocaleDateString([], {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    timeZone: 'UTC',
  });
}

function ms(value: number | null): string {
  return value === null ? '–' : `${Math.round(value)} ms`;
}

/** A day's figures in words: what the cell's colour means, and more. */
export function dayText(day: UptimeDay, noun: string): string {
  if (day.runs === 0 && day.maintenance_runs === 0) return `${dayName(day.date)}: no data`;
  return [
    `${dayName(day.date)}: ${percent(day.availability)} available`,
    `${day.runs} ${noun}, ${day.failed} failed`,
    ...(day.maintenance_runs > 0 ? [`${day.maintenance_runs} in maintenance`] : []),
    `p50 ${ms(day.p50_ms)}, p95 ${ms(day.p95_ms)}`,
  ].join(' · ');
}

export interface UptimeView {
  root: HTMLElement;
  update(env: UptimeEnvironment, check: string | null): void;
}

/** The record's card of environment `name`; filled by `update`. */
export function uptimeCard(name: string): UptimeView {
  const headingId = `${name}-uptime`;
  const detailId = `${name}-day-detail`;
  const body = el('div', { class: 'card-body' });
  const root = el(
    'section',
    { class: 'card full uptime', 'aria-labelledby': headingId, 'data-testid': 'uptime' },
    el('h3', { id: headingId }, 'Last 90 days'),
    body,
  );
  /** The day shown in the detail line: the focused one, or the last one hovered. */
  let shown: string | null = null;
  let key = '';
  return {
    root,
    update(env, check) {
      // Rebuilt only when the record changed: a rebuild under the pointer would flicker.
      const next = JSON.stringify(env);
      if (next === key) return;
      key = next;
      const noun = check === null ? 'runs' : `${check} runs`;
      const days = env.days;
      shown ??= days.at(-1)?.date ?? null;
      const detail = el('p', {
        id: detailId,
        class: 'day-detail',
        'data-testid': 'day-detail',
      });
      const show = (day: UptimeDay): void => {
        shown = day.date;
        detail.textContent = dayText(day, noun);
      };
      const strip = el('ol', {
        class: 'strip',
        'aria-label': `Availability per UTC day, oldest first; arrow keys move between days`,
        'data-testid': 'strip',
      });
      const cells: HTMLButtonElement[] = [];
      days.forEach((day, i) => {
        const cell = el('button', {
          type: 'button',
          class: `day ${band(day.availability)}`,
          'aria-label': dayText(day, noun),
          'aria-describedby': detailId,
          tabindex: day.date === shown ? '0' : '-1',
          'data-focus': `day-${day.date}`,
          'data-date': day.date,
          'data-availability': day.availability === null ? '' : String(day.availability),
          'data-runs': String(day.runs),
          'data-failed': String(day.failed),
          'data-testid': 'day',
        });
        cell.addEventListener('mouseenter', () => show(day));
        cell.addEventListener('focus', () => {
          for (const other of cells) other.tabIndex = other === cell ? 0 : -1;
          show(day);
        });
        cell.addEventListener('keydown', (event) => {
          const to =
            event.key === 'ArrowLeft'
              ? i - 1
              : event.key === 'ArrowRight'
                ? i + 1
                : event.key === 'Home'
                  ? 0
                  : event.key === 'End'
                    ? cells.length - 1
                    : null;
          if (to === null) return;
          event.preventDefault();
          cells[Math.max(0, Math.min(cells.length - 1, to))]?.focus();
        });
        cells.push(cell);
        strip.appendChild(el('li', {}, cell));
      });
      const current = days.find((d) => d.date === shown) ?? days.at(-1);
      if (current) show(current);
      replaceKeepingFocus(
        body,
        windows(env),
        strip,
        el(
          'p',
          { class: 'strip-axis muted', 'aria-hidden': 'true' },
          el('span', {}, `${days.length} days ago`),
          el('span', {}, 'today (UTC)'),
        ),
        detail,
        legend(),
        incidents(env.incidents, days.length),
      );
    },
  };
}

/** The uptime per window, as a row of figures. */
function windows(env: UptimeEnvironment): HTMLElement {
  return el(
    'dl',
    { class: 'windows', 'data-testid': 'windows' },
    ...WINDOWS.flatMap(([key, label]) => [
      el(
        'div',
        {},
        el('dt', {}, label),
        el('dd', { 'data-window': key }, percent(env.uptime[key])),
      ),
    ]),
  );
}

function legend(): HTMLElement {
  const item = (cls: string, label: string): HTMLElement =>
    el('li', {}, el('span', { class: `swatch day ${cls}`, 'aria-hidden': 'true' }), label);
  return el(
    'ul',
    { class: 'legend', 'aria-label': 'Day colours' },
    item('full', '≥ 99.95 %'),
    item('ok', '≥ 99.5 %'),
    item('warn', '≥ 99 % (taller)'),
    item('bad', '< 99 % (taller)'),
    item('none', 'no data'),
  );
}

/** The incidents, the latest first, with cause and duration. */
function incidents(list: readonly UptimeIncident[], days: number): HTMLElement {
  if (list.length === 0) {
    return el('p', { 'data-testid': 'incidents' }, `No incidents in the last ${days} days.`);
  }
  const shown = list.slice(0, MAX_INCIDENTS);
  return el(
    'div',
    {},
    el('h4', {}, `Incidents (${list.length})`),
    el(
      'ol',
      { class: 'incidents', 'data-testid': 'incidents' },
      ...shown.map((incident) =>
        el(
          'li',
          { 'data-testid': 'incident' },
          el(
            'time',
            { datetime: incident.start },
            new Date(incident.start).toLocaleString([], {
              day: 'numeric',
              month: 'short',
              hour: '2-digit',
              minute: '2-digit',
              hour12: false,
            }),
          ),
          ' ',
          el('span', { class: 'result fail' }, visible(incident.cause)),
          ` · ${incident.ongoing ? 'ongoing, ' : ''}${duration(incident.duration_seconds)}`,
          ` · ${incident.failed} failed`,
          incident.maintenance ? ' · in maintenance' : '',
        ),
      ),
    ),
    list.length > shown.length
      ? el('p', { class: 'muted' }, `${list.length - shown.length} earlier in /api/uptime.`)
      : null,
  );
}
