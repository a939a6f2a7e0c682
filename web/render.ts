/**
 * One environment's section: its state, last ping and phases, latency chart, run timelines with
 * step traces, outcome distributions, sessions, latest failures, and every registered check's
 * latest result. Which panels a check gets comes from its `page` view in the document.
 */
import { LatencyChart } from './chart.js';
import { el, replaceKeepingFocus, visible } from './dom.js';
import { ago, clock, every, median, ms, span, words } from './format.js';
import { contractCard } from './contract.js';
import { uptimeCard } from './uptime.js';
import type {
  CheckHistory,
  CheckInfo,
  DriftReport,
  EnvironmentHistory,
  HistoryDocument,
  Run,
  Sample,
  UptimeEnvironment,
} from './types.js';

export interface EnvironmentView {
  section: HTMLElement;
  update(doc: HistoryDocument, now: number): void;
  /** The environment's 90-day record (`/api/uptime`). */
  uptime(env: UptimeEnvironment, check: string | null): void;
  /** Contract drift (`/api/drift`). */
  contract(report: DriftReport, now: number): void;
}

const MAX_FAILURES = 8;

/** Text of an API value: control and direction characters shown, never interpreted. */
function text(value: unknown): string {
  if (value === null || value === undefined) return '–';
  return visible(String(value));
}

function latest(history: CheckHistory | undefined): Sample | null {
  return history?.samples[history.samples.length - 1] ?? null;
}

function runOf(history: CheckHistory | undefined, seq: number): Run | undefined {
  return history?.runs.find((r) => r.seq === seq);
}

/** A card: a titled region of the section. */
function card(
  id: string,
  title: string,
  extraClass = '',
): { root: HTMLElement; body: HTMLElement } {
  const body = el('div', { class: 'card-body' });
  const root = el(
    'section',
    { class: `card ${extraClass}`.trim(), 'aria-labelledby': id },
    el('h3', { id }, title),
    body,
  );
  return { root, body };
}

/** Creates the section of environment `name`; its panels are built on the first update. */
export function renderEnvironment(name: string): EnvironmentView {
  const headingId = `env-${name}`;
  const state = el('p', { class: 'state', 'data-testid': 'state' });
  // A live region of its own: entering or leaving a window is announced, the rest is not.
  const maintenance = el('p', {
    class: 'maintenance',
    'data-testid': 'maintenance',
    role: 'status',
    hidden: true,
  });
  const grid = el('div', { class: 'grid' });
  const contract = contractCard(name);
  const record = uptimeCard(name);
  // Hidden until `/api/uptime` answers: an empty card would only shift the layout.
  record.root.hidden = true;
  const section = el(
    'section',
    { class: 'environment', 'aria-labelledby': headingId, 'data-environment': name },
    el('div', { class: 'env-head' }, el('h2', { id: headingId }, name), state),
    maintenance,
    record.root,
    grid,
    contract.root,
  );
  const selected = new Map<string, number>();
  let panels: Array<(doc: HistoryDocument, env: EnvironmentHistory, now: number) => void> | null =
    null;

  const build = (doc: HistoryDocument): void => {
    panels = [];
    const id = (part: string): string => `${name}-${part}`;
    for (const check of doc.checks) {
      const view = check.page;
      if (view.headline) {
        const c = card(id(`${check.name}-last`), `Last ${check.name}`);
        grid.appendChild(c.root);
        panels.push((_d, env, now) => replaceKeepingFocus(c.body, lastRun(env, check, now)));
      }
      if (view.latencyChart) {
        const c = card(id(`${check.name}-chart`), `${check.name} latency`, 'wide');
        const box = el('div', { class: 'chart', role: 'img' });
        const caption = el('p', { class: 'caption' });
        c.body.append(box, legend(), caption);
        grid.appendChild(c.root);
        let chart: LatencyChart | null = null;
        panels.push((d, env) => {
          const history = env.checks[check.name];
          const samples = history?.samples ?? [];
          chart ??= new LatencyChart(box, env.thresholds_ms);
          chart.update(samples, env.thresholds_ms);
          const durations = samples.map((s) => s.duration_ms);
          const failed = samples.filter((s) => s.outcome === 'fail').length;
          const summary =
            `${samples.length} runs over the last ${span(d.window_ms)}` +
            (samples.length
              ? `: median ${ms(median(durations))}, max ${ms(Math.max(...durations))}, ${failed} failed`
              : '');
          box.setAttribute('aria-label', `Latency chart. ${summary}.`);
          caption.textContent = `${summary}. Thresholds: expected ≤ ${ms(env.thresholds_ms.expected)}, warning > ${ms(env.thresholds_ms.warning)}, critical > ${ms(env.thresholds_ms.critical)}.`;
        });
      }
      if (view.timeline) {
        const c = card(id(`${check.name}-runs`), `${check.name} runs`, 'wide');
        grid.appendChild(c.root);
        panels.push((_d, env) =>
          replaceKeepingFocus(c.body, ...timeline(name, check, env.checks[check.name], selected)),
        );
      }
      if (view.distribution) {
        const dist = view.distribution;
        const c = card(id(`${check.name}-dist`), dist.label);
        grid.appendChild(c.root);
        panels.push((d, env) =>
          replaceKeepingFocus(c.body, distribution(check, dist, env.checks[check.name], d)),
        );
      }
    }
    const sessions = card(id('sessions'), 'Sessions and data');
    const failures = card(id('failures'), 'Latest failures', 'wide');
    const checks = card(id('checks'), 'Checks', 'full');
    grid.append(sessions.root, failures.root, checks.root);
    panels.push((_d, env) => replaceKeepingFocus(sessions.body, sessionsPanel(env)));
    panels.push((d, env, now) => replaceKeepingFocus(failures.body, failuresPanel(d, env, now)));
    panels.push((d, env, now) => replaceKeepingFocus(checks.body, checksPanel(d, env, now)));
  };

  return {
    section,
    update(doc, now) {
      const env = doc.environments[name];
      if (env === undefined) return;
      if (panels === null) build(doc);
      replaceKeepingFocus(state, ...headline(doc, env, now));
      maintenanceBanner(maintenance, env, now);
      for (const panel of panels ?? []) panel(doc, env, now);
    },
    uptime(env, check) {
      record.root.hidden = false;
      record.update(env, check);
    },
    contract(report, now) {
      contract.update(report, now);
    },
  };
}

/**
 * The active maintenance window (its reason and end) or the next one within 24 hours (its start
 * and end); hidden when there is neither. Times are the viewer's local time, with the ISO time in
 * `datetime`.
 */
function maintenanceBanner(node: HTMLElement, env: EnvironmentHistory, now: number): void {
  const planned = env.maintenance;
  const key =
    planned === null ? '' : `${planned.state} ${planned.start} ${planned.end} ${planned.reason}`;
  // Rewritten only when the planned changes, so the live region speaks once.
  if (node.dataset['key'] === key) return;
  node.dataset['key'] = key;
  node.hidden = planned === null;
  node.dataset['state'] = planned?.state ?? '';
  if (planned === null) {
    node.replaceChildren();
    return;
  }
  const at = (iso: string) => el('time', { datetime: iso }, wallTime(Date.parse(iso), now));
  node.replaceChildren(
    el(
      'span',
      { class: 'badge maintenance-badge' },
      planned.state === 'active' ? 'MAINTENANCE' : 'PLANNED',
    ),
    ' ',
    ...(planned.state === 'active'
      ? ['Maintenance until ', at(planned.end)]
      : ['Maintenance from ', at(planned.start), ' to ', at(planned.end)]),
    ': ',
    el('span', { class: 'reason' }, text(planned.reason)),
    planned.state === 'active' ? '. Pages are held back; checks go on.' : '.',
  );
}

/** `14:30`, or `Sat 14:30` when not today (local time). */
function wallTime(t: number, now: number): string {
  const date = new Date(t);
  const hm = date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false });
  return date.toDateString() === new Date(now).toDateString()
    ? hm
    : `${date.toLocaleDateString([], { weekday: 'short' })} ${hm}`;
}

/** Up or down, the latency class in words and colour, and how fresh that is. */
function headline(doc: HistoryDocument, env: EnvironmentHistory, now: number): Node[] {
  const check = doc.checks.find((c) => c.page.headline);
  const history = check ? env.checks[check.name] : undefined;
  const last = latest(history);
  const state = last === null ? 'unknown' : last.outcome === 'pass' ? 'up' : 'down';
  const cls = check?.page.headline && last ? last.summary[check.page.headline.classKey] : null;
  const stale =
    last !== null && history !== undefined && now - last.t > 3 * history.interval_ms + 5000;
  const out: Node[] = [
    el(
      'span',
      { class: `badge ${state}`, 'data-testid': 'up', 'data-state': state },
      state === 'unknown' ? 'NO DATA' : state.toUpperCase(),
    ),
  ];
  if (cls) {
    out.push(
      el(
        'span',
        { class: `badge class-${cls}`, 'data-testid': 'latency-class', 'data-class': cls },
        `latency ${text(cls)}`,
      ),
    );
  }
  if (last) out.push(el('span', { class: 'when' }, `${stale ? 'stale: ' : ''}${ago(last.t, now)}`));
  return out;
}

function legend(): HTMLElement {
  const item = (cls: string, label: string): HTMLElement =>
    el('li', {}, el('span', { class: `swatch ${cls}`, 'aria-hidden': 'true' }), label);
  return el(
    'ul',
    { class: 'legend', 'aria-label': 'Chart bands' },
    item('band-expected', 'expected'),
    item('band-elevated', 'elevated'),
    item('band-warning', 'warning'),
    item('band-critical', 'critical'),
    item('failed', 'failed run'),
  );
}

/** The headline check's last run: its duration, outcome and phases. */
function lastRun(env: EnvironmentHistory, check: CheckInfo, now: number): Node {
  const history = env.checks[check.name];
  const last = latest(history);
  if (last === null) return el('p', {}, history?.enabled === false ? 'disabled' : 'no run yet');
  const phases = Object.entries(last.details).filter(([, v]) => v !== null) as Array<
    [string, number]
  >;
  const total = phases.reduce((sum, [, v]) => sum + v, 0);
  return el(
    'div',
    {},
    el(
      'p',
      { class: 'big' },
      el('span', { 'data-testid': 'last-ms' }, ms(last.duration_ms)),
      ' ',
      el(
        'span',
        { class: `result ${last.outcome}` },
        last.outcome === 'pass' ? 'ok' : text(last.reason),
      ),
    ),
    el(
      'p',
      { class: 'muted' },
      `${clock(last.t)} (${ago(last.t, now)}), ${every(history?.interval_ms ?? 0)}`,
    ),
    phases.length > 0 && total > 0
      ? el(
          'div',
          { class: 'phasebar', 'aria-hidden': 'true' },
          ...phases.map(([, v], i) => {
            const bar = el('span', { class: `phase p${i % 5}` });
            // CSSOM, not a style attribute: the CSP allows no inline styles.
            bar.style.flexGrow = String(v / total);
            return bar;
          }),
        )
      : null,
    phases.length > 0
      ? el(
          'dl',
          { class: 'phases' },
          ...phases.flatMap(([key, v], i) => [
            el('dt', {}, el('span', { class: `dot p${i % 5}`, 'aria-hidden': 'true' }), words(key)),
            el('dd', {}, ms(v)),
          ]),
        )
      : null,
  );
}

/** Runs as a row of buttons (newest last); the selected one's step trace below. */
function timeline(
  envName: string,
  check: CheckInfo,
  history: CheckHistory | undefined,
  selected: Map<string, number>,
): Node[] {
  if (!history || history.runs.length === 0) {
    return [el('p', {}, history?.enabled === false ? 'disabled' : 'no run yet')];
  }
  const traceId = `trace-${envName}-${check.name}`;
  const chosen = selected.get(check.name);
  const keys = check.summary_keys;
  const list = el('ol', { class: 'timeline', 'aria-label': `${check.name} runs, oldest first` });
  for (const run of history.runs) {
    const t = run.started_at ? Date.parse(run.started_at) : NaN;
    const facts = keys.map((k) => run[k]).filter((v) => v !== null && v !== undefined);
    const label = `${Number.isNaN(t) ? 'run' : clock(t)}: ${run.outcome === 'pass' ? 'pass' : `fail, ${text(run.reason)}`}${facts.length ? `, ${facts.map(text).join(', ')}` : ''}, ${ms(run.duration_ms)}`;
    const button = el(
      'button',
      {
        type: 'button',
        class: `run ${run.outcome}`,
        'aria-expanded': String(run.seq === chosen),
        'aria-controls': traceId,
        'aria-label': label,
        title: label,
        'data-focus': `run-${run.seq}`,
        'data-testid': 'run',
      },
      run.outcome === 'pass' ? '✓' : '✕',
    );
    button.addEventListener('click', () => {
      if (selected.get(check.name) === run.seq) selected.delete(check.name);
      else selected.set(check.name, run.seq);
      const list = button.closest('.card-body');
      if (list) replaceKeepingFocus(list, ...timeline(envName, check, history, selected));
    });
    list.appendChild(el('li', {}, button));
  }
  const run = chosen === undefined ? undefined : runOf(history, chosen);
  return [
    list,
    el(
      'p',
      { class: 'muted' },
      `${history.runs.length} most recent runs, ${every(history.interval_ms)}. Select one for its steps.`,
    ),
    el(
      'div',
      { id: traceId, class: 'trace', 'data-testid': 'trace' },
      run ? trace(run, keys) : null,
    ),
  ];
}

/** One run's step trace: method, path, status, duration, request_id, error. */
function trace(run: Run, keys: readonly string[]): Node {
  const t = run.started_at ? Date.parse(run.started_at) : NaN;
  const facts = keys
    .map((k) => [k, run[k]] as const)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${words(k)} ${text(v)}`);
  const head = [
    Number.isNaN(t) ? 'Run' : `Run at ${clock(t)}`,
    run.outcome === 'pass' ? 'pass' : `fail: ${text(run.reason)}`,
    ...facts,
    ms(run.duration_ms),
  ].join(' · ');
  const rows = run.steps.map((s) =>
    el(
      'tr',
      {},
      el('td', { 'data-label': 'step' }, text(s.name)),
      el('td', { 'data-label': 'method' }, text(s.method)),
      el('td', { class: 'mono', 'data-label': 'path' }, text(s.path)),
      el(
        'td',
        {
          // Only server errors are marked: a 4xx may be what the step expects (410 after a close).
          class: s.status_code !== null && s.status_code >= 500 ? 'bad' : undefined,
          'data-label': 'status',
        },
        text(s.status_code),
      ),
      el('td', { class: 'num', 'data-label': 'duration' }, ms(s.duration_ms)),
      el(
        'td',
        { class: 'mono', 'data-label': 'request_id', 'data-testid': 'request-id' },
        text(s.request_id),
      ),
      el('td', { class: 'err', 'data-label': 'error', 'data-testid': 'step-error' }, text(s.error)),
    ),
  );
  return el(
    'div',
    {},
    el('h4', {}, head),
    el(
      'div',
      { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': 'Steps' },
      el(
        'table',
        {},
        el(
          'thead',
          {},
          el(
            'tr',
            {},
            ...['step', 'method', 'path', 'status', 'duration', 'request_id', 'error'].map((h) =>
              el('th', { scope: 'col' }, h),
            ),
          ),
        ),
        el('tbody', {}, ...rows),
      ),
    ),
  );
}

/** How the retained runs spread over a summary key's values, and a duration's median and max. */
function distribution(
  check: CheckInfo,
  dist: NonNullable<CheckInfo['page']['distribution']>,
  history: CheckHistory | undefined,
  doc: HistoryDocument,
): Node {
  const samples = history?.samples ?? [];
  const counts = new Map<string, number>();
  for (const s of samples) {
    const value = String(s.summary[dist.key] ?? 'no outcome');
    counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  const total = samples.length;
  const durations = dist.durationKey
    ? samples
        .map((s) => s.details[dist.durationKey ?? ''])
        .filter((v): v is number => typeof v === 'number')
    : [];
  return el(
    'div',
    {},
    total === 0
      ? el('p', {}, 'no run yet')
      : el(
          'ul',
          { class: 'bars' },
          ...[...counts.entries()]
            .sort((a, b) => b[1] - a[1])
            .map(([value, n]) =>
              el(
                'li',
                {},
                el('span', { class: 'bar-label' }, text(value)),
                el('meter', { min: 0, max: total, value: n, 'aria-hidden': 'true' }),
                el('span', { class: 'num' }, `${n} (${Math.round((100 * n) / total)} %)`),
              ),
            ),
        ),
    dist.durationKey
      ? el(
          'p',
          {},
          `${dist.durationLabel ?? words(dist.durationKey)}: `,
          el('strong', {}, `median ${ms(median(durations))}`),
          `, max ${durations.length ? ms(Math.max(...durations)) : '–'}`,
        )
      : null,
    el('p', { class: 'muted' }, `${check.name}: ${total} runs in the last ${span(doc.window_ms)}`),
  );
}

/** Open synthetic sessions and the latest data set reported by any check. */
function sessionsPanel(env: EnvironmentHistory): Node {
  let dataSet: string | null = null;
  for (const history of Object.values(env.checks)) {
    for (const s of history.samples) {
      const value = s.summary['service_data_set'];
      if (value !== undefined && value !== null) dataSet = String(value);
    }
  }
  return el(
    'dl',
    { class: 'facts' },
    el('dt', {}, 'Open synthetic sessions'),
    el(
      'dd',
      { class: env.sessions_open ? 'warn-text' : '', 'data-testid': 'sessions-open' },
      env.sessions_open === null ? '–' : String(env.sessions_open),
    ),
    el('dt', {}, 'service_data_set'),
    el('dd', { class: 'mono' }, text(dataSet)),
  );
}

/** The newest failed runs of every check, with reasons and the failing step's error. */
function failuresPanel(doc: HistoryDocument, env: EnvironmentHistory, now: number): Node {
  const failures = doc.checks
    .flatMap((check) =>
      (env.checks[check.name]?.samples ?? [])
        .filter((s) => s.outcome === 'fail')
        .map((s) => ({ check, sample: s })),
    )
    .sort((a, b) => b.sample.t - a.sample.t)
    .slice(0, MAX_FAILURES);
  if (failures.length === 0) return el('p', {}, `No failures in the last ${span(doc.window_ms)}.`);
  return el(
    'ol',
    { class: 'failures', 'data-testid': 'failures' },
    ...failures.map(({ check, sample }) => {
      const run = runOf(env.checks[check.name], sample.seq);
      const step = run?.steps.find((s) => s.error !== null);
      return el(
        'li',
        {},
        el('span', { class: 'when' }, `${clock(sample.t)} (${ago(sample.t, now)})`),
        ' ',
        el('strong', {}, check.name),
        ' ',
        el('span', { class: 'result fail' }, text(sample.reason)),
        step
          ? el(
              'div',
              { class: 'detail' },
              `${text(step.name)}: ${text(step.error)}`,
              step.request_id
                ? el('span', { class: 'mono' }, ` request_id ${text(step.request_id)}`)
                : null,
            )
          : null,
      );
    }),
  );
}

/** Every registered check's latest result, in registry order. */
function checksPanel(doc: HistoryDocument, env: EnvironmentHistory, now: number): Node {
  const rows = doc.checks.map((check) => {
    const history = env.checks[check.name];
    const last = latest(history);
    const facts = last
      ? check.summary_keys
          .map((k) => [k, last.summary[k]] as const)
          .filter(([, v]) => v !== null && v !== undefined)
          .map(([k, v]) => `${words(k)} ${text(v)}`)
          .join(', ')
      : '';
    const result = !history?.enabled
      ? el('span', { class: 'result' }, 'disabled')
      : last === null
        ? el('span', { class: 'result' }, 'no run yet')
        : el(
            'span',
            { class: `result ${last.outcome}` },
            last.outcome === 'pass' ? '✓ pass' : `✕ ${text(last.reason)}`,
          );
    return el(
      'tr',
      { 'data-check': check.name },
      el('th', { scope: 'row' }, check.name),
      el('td', { class: 'nowrap' }, result),
      el('td', { class: 'err' }, facts || '–'),
      el('td', { class: 'num' }, last ? ms(last.duration_ms) : '–'),
      el('td', { class: 'nowrap' }, last ? ago(last.t, now) : '–'),
    );
  });
  return el(
    'div',
    { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': 'Checks' },
    el(
      'table',
      { 'data-testid': 'checks' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ...['check', 'result', 'found', 'duration', 'when'].map((h) =>
            el('th', { scope: 'col' }, h),
          ),
        ),
      ),
      el('tbody', {}, ...rows),
    ),
  );
}
