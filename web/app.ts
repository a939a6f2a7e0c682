/**
 * The status page: polls `/api/history` (the whole retained history once, then only what came
 * since the last sequence number), merges it and renders one section per environment; and
 * `/api/uptime` (90 days per environment) once a minute, as its figures change no faster. Polling
 * stops while the tab is hidden. Everything is rendered from the document, whose `checks` list is
 * the daemon's registry: the page names no check. `/api/drift` (contract drift) is read at load
 * and every 30 s.
 */
import './style.css';
import { renderEnvironment, type EnvironmentView } from './render.js';
import type { CheckHistory, DriftReport, HistoryDocument, UptimeDocument } from './types.js';

/** Refresh period: 5 s, or `?refresh=N` seconds (1–60). */
const REFRESH_MS = (() => {
  const n = Number(new URLSearchParams(location.search).get('refresh'));
  return Number.isInteger(n) && n >= 1 && n <= 60 ? n * 1000 : 5000;
})();

const container = document.getElementById('environments') as HTMLElement;
const updated = document.getElementById('updated') as HTMLElement;
const views = new Map<string, EnvironmentView>();
let doc: HistoryDocument | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;
let inFlight: AbortController | null = null;
/** The record changes by the minute at most: fetched at load, then once a minute. */
const UPTIME_REFRESH_MS = 60_000;
let uptime: UptimeDocument | null = null;
let uptimeFetchedAt = -Infinity;
/** Contract drift: an alert waits 15 minutes on it, so the page reads it every 30 s at most. */
const DRIFT_REFRESH_MS = 30_000;
let drift: DriftReport | null = null;
let driftFetchedAt = -Infinity;

async function fetchHistory(after: number | null): Promise<HistoryDocument> {
  inFlight = new AbortController();
  const url = after === null ? 'api/history' : `api/history?after=${after}`;
  const res = await fetch(url, {
    signal: inFlight.signal,
    headers: { Accept: 'application/json' },
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return (await res.json()) as HistoryDocument;
}

/** Appends an increment to the retained history, trimmed to each check's capacity and window. */
function merge(base: HistoryDocument, inc: HistoryDocument): void {
  base.generated_at = inc.generated_at;
  base.seq = inc.seq;
  base.window_ms = inc.window_ms;
  base.checks = inc.checks;
  const oldest = Date.parse(inc.generated_at) - inc.window_ms;
  for (const [name, env] of Object.entries(inc.environments)) {
    const known = base.environments[name];
    if (known === undefined) {
      base.environments[name] = env;
      continue;
    }
    known.thresholds_ms = env.thresholds_ms;
    known.sessions_open = env.sessions_open;
    known.maintenance = env.maintenance;
    for (const [check, history] of Object.entries(env.checks)) {
      const mine: CheckHistory | undefined = known.checks[check];
      if (mine === undefined) {
        known.checks[check] = history;
        continue;
      }
      mine.enabled = history.enabled;
      mine.interval_ms = history.interval_ms;
      mine.capacity = history.capacity;
      mine.samples = [...mine.samples, ...history.samples]
        .filter((s) => s.t >= oldest)
        .slice(-history.capacity.samples);
      mine.runs = [...mine.runs, ...history.runs].slice(-history.capacity.runs);
    }
  }
}

/** Fetches `/api/uptime` when a minute passed since it was last fetched; failures wait too. */
async function refreshUptime(): Promise<void> {
  if (performance.now() - uptimeFetchedAt < UPTIME_REFRESH_MS) return;
  uptimeFetchedAt = performance.now();
  try {
    const res = await fetch('api/uptime', { headers: { Accept: 'application/json' } });
    if (res.ok) uptime = (await res.json()) as UptimeDocument;
  } catch {
    // The history's refresh says when the monitor cannot be reached.
  }
}

/** Fetches `/api/drift` every 30 s; a failure keeps the last document and waits too. */
async function refreshDrift(): Promise<void> {
  if (performance.now() - driftFetchedAt < DRIFT_REFRESH_MS) return;
  driftFetchedAt = performance.now();
  try {
    const res = await fetch('api/drift', { headers: { Accept: 'application/json' } });
    if (res.ok) drift = (await res.json()) as DriftReport | null;
  } catch {
    // As above.
  }
}

async function refresh(): Promise<void> {
  clearTimeout(timer);
  try {
    await Promise.all([refreshUptime(), refreshDrift()]);
    const inc = await fetchHistory(doc === null ? null : doc.seq);
    // A restarted daemon counts from 0 again: start over rather than merge.
    if (doc === null || inc.seq < doc.seq) doc = doc === null ? inc : await fetchHistory(null);
    else merge(doc, inc);
    render(doc);
    updated.textContent = `Updated ${new Date(doc.generated_at).toLocaleTimeString([], { hour12: false })} · refreshes every ${REFRESH_MS / 1000} s`;
    updated.classList.remove('stale');
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') return;
    updated.textContent = `Could not reach the monitor (${err instanceof Error ? err.message : 'error'}); retrying every ${REFRESH_MS / 1000} s`;
    updated.classList.add('stale');
  } finally {
    inFlight = null;
  }
  schedule();
}

function schedule(): void {
  clearTimeout(timer);
  if (document.visibilityState === 'visible') timer = setTimeout(() => void refresh(), REFRESH_MS);
}

function render(current: HistoryDocument): void {
  const now = Date.now();
  for (const name of Object.keys(current.environments)) {
    let view = views.get(name);
    if (view === undefined) {
      view = renderEnvironment(name);
      views.set(name, view);
      container.appendChild(view.section);
    }
    view.update(current, now);
    const record = uptime?.environments.find((e) => e.environment === name);
    if (record !== undefined) view.uptime(record, uptime?.check ?? null);
    if (drift !== null) view.contract(drift, now);
  }
  document.body.dataset['ready'] = String(current.seq);
}

// Hidden tabs do not poll; coming back refreshes at once.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') void refresh();
  else {
    clearTimeout(timer);
    inFlight?.abort();
  }
});

void refresh();
