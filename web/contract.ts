/**
 * The contract card of an environment: what its answers look like against the accepted baseline
 * (docs/drift.md). The open differences by severity and since when, each difference's operation,
 * path, what the baseline holds and what is seen now, and where this environment's answers differ
 * from the other environments'. It reads `/api/drift`, the document `isa-monitor drift --json`
 * prints, so the page, the daemon and the command show the same thing.
 */
import { el, replaceKeepingFocus, visible } from './dom.js';
import { ago } from './format.js';
import type { AcrossDifference, DriftDifference, DriftEnvironment, DriftReport } from './types.js';

/** Differences listed at most; the others are counted. */
const MAX_LISTED = 8;
const SEVERITIES = ['breaking', 'warning', 'info'] as const;

export interface ContractView {
  root: HTMLElement;
  update(report: DriftReport, now: number): void;
}

/** The card of environment `name`, hidden until the document names the environment. */
export function contractCard(name: string): ContractView {
  const headingId = `${name}-contract`;
  const body = el('div', { class: 'card-body' });
  const root = el(
    'section',
    { class: 'card full contract', 'aria-labelledby': headingId, 'data-testid': 'contract' },
    el('h3', { id: headingId }, 'API contract'),
    body,
  );
  root.hidden = true;
  return {
    root,
    update(report, now) {
      const env = report.environments[name];
      root.hidden = env === undefined;
      if (env === undefined) return;
      const across = report.across.filter((d) => d.has[name] !== undefined);
      replaceKeepingFocus(
        body,
        summary(env, now),
        differences(env, now),
        acrossList(name, across, now),
      );
    },
  };
}

/** The counts by severity with the oldest open difference's age, or why there are none. */
function summary(env: DriftEnvironment, now: number): HTMLElement {
  const operations = Object.values(env.operations);
  const learning = operations.filter((op) => op.learningSince !== null).length;
  const open = SEVERITIES.filter((s) => env.bySeverity[s].count > 0);
  const line = el('p', { class: 'contract-summary', 'data-testid': 'contract-summary' });
  if (operations.length === 0) {
    line.append('No answer learned yet.');
    return line;
  }
  if (open.length === 0) line.append(el('span', { class: 'badge up' }, 'matches'), ' ');
  for (const severity of open) {
    const { count, since } = env.bySeverity[severity];
    line.append(
      el(
        'span',
        { class: `badge drift-${severity}`, 'data-severity': severity, 'data-count': count },
        `${count} ${severity}`,
      ),
      ' ',
      since === null ? '' : el('span', { class: 'when' }, `oldest ${ago(Date.parse(since), now)} `),
    );
  }
  const settled = operations.length - learning;
  line.append(
    el(
      'span',
      { class: 'muted' },
      `${settled} of ${operations.length} operations against an accepted baseline` +
        (learning > 0 ? `, ${learning} still learning` : ''),
    ),
  );
  return line;
}

/** The open differences, breaking first, the oldest first within a severity. */
function differences(env: DriftEnvironment, now: number): HTMLElement | null {
  const all = Object.values(env.operations)
    .flatMap((op) => op.differences)
    .sort(
      (a, b) =>
        SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity) ||
        a.firstSeen.localeCompare(b.firstSeen),
    );
  if (all.length === 0) return null;
  const table = el(
    'table',
    { class: 'contract-differences', 'data-testid': 'contract-differences' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...['severity', 'operation', 'path', 'baseline', 'now', 'first seen'].map((h) =>
          el('th', { scope: 'col' }, h),
        ),
      ),
    ),
    el('tbody', {}, ...all.slice(0, MAX_LISTED).map((d) => differenceRow(d, now))),
  );
  const more = all.length - MAX_LISTED;
  return el(
    'div',
    { class: 'scroll' },
    table,
    more > 0
      ? el('p', { class: 'muted' }, `and ${more} more: isa-monitor drift shows them all`)
      : null,
  );
}

function differenceRow(d: DriftDifference, now: number): HTMLElement {
  return el(
    'tr',
    { 'data-testid': 'contract-difference', 'data-operation': d.operation, 'data-path': d.path },
    el(
      'td',
      { 'data-label': 'severity' },
      el('span', { class: `badge drift-${d.severity}` }, d.severity),
    ),
    el('td', { 'data-label': 'operation' }, visible(d.operation)),
    el('td', { 'data-label': 'path' }, el('code', {}, visible(d.path))),
    el('td', { 'data-label': 'baseline' }, visible(d.baseline)),
    el('td', { 'data-label': 'now', title: `e.g. ${visible(d.example)}` }, visible(d.seen)),
    el(
      'td',
      { 'data-label': 'first seen' },
      el('time', { datetime: d.firstSeen }, ago(Date.parse(d.firstSeen), now)),
    ),
  );
}

/** Where this environment's answers differ from the others': which has what, and since when. */
function acrossList(name: string, across: readonly AcrossDifference[], now: number): HTMLElement {
  const heading = el('h4', {}, 'Against the other environments');
  if (across.length === 0) {
    return el(
      'div',
      {},
      heading,
      el('p', { class: 'muted' }, 'The same shapes, data set and providers.'),
    );
  }
  const items = across.slice(0, MAX_LISTED).map((d) => {
    const others = Object.entries(d.has)
      .filter(([env]) => env !== name)
      .map(([env, has]) => `${env} ${visible(has)}`)
      .join(', ');
    return el(
      'li',
      { 'data-testid': 'contract-across', 'data-subject': d.subject },
      el('span', { class: 'drift-kind' }, d.kind.replaceAll('_', ' ')),
      ' ',
      d.operation === undefined ? '' : `${visible(d.operation)} `,
      el('code', {}, visible(d.subject)),
      `: here ${visible(d.has[name] ?? 'absent')}; ${others}`,
      ' ',
      el(
        'span',
        { class: 'when' },
        `first seen ${ago(Date.parse(d.since), now)}${d.lasting ? ', lasting' : ''}`,
      ),
    );
  });
  const more = across.length - MAX_LISTED;
  return el(
    'div',
    {},
    heading,
    el('ul', { class: 'contract-across' }, ...items),
    more > 0 ? el('p', { class: 'muted' }, `and ${more} more`) : null,
  );
}
