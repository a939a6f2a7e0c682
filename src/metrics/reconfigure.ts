/**
 * A configuration reload's effect on the registry (docs/configuration.md, "Reload"). Counters and
 * histograms of what stays go on counting: a reload is not a restart. Series appear for added
 * environments and newly enabled checks, from 0 as at start-up, and go for removed environments
 * and disabled checks, as they would be absent after a restart. A histogram whose bounds come
 * from the configuration (the latency thresholds) is made anew when those bounds change: its
 * counts start again, as at a restart, since a bucket cannot be added to a live histogram and a
 * threshold must be a bound for the rules to judge it exactly (docs/alerts.md, "Thresholds").
 */
import type { Counter, Gauge, Histogram } from 'prom-client';
import { createsSessions, type AnyCheck } from '../kernel/check.js';
import {
  bucketsOf,
  createHandle,
  handleOf,
  zeroInitialise,
  type Metrics,
  type MetricsEnvironment,
} from './registry.js';

type Handle = Counter<string> | Gauge<string> | Histogram<string>;

export interface Reconfiguration {
  checks: readonly AnyCheck[];
  previous: readonly MetricsEnvironment[];
  next: readonly MetricsEnvironment[];
}

/** What changed, for the log line of the reload. */
export interface MetricsChange {
  /** Histogram families made anew because their configured bounds changed. */
  rebuilt: string[];
}

/** Brings the registry's series from the `previous` environments to the `next` ones. */
export async function reconfigureMetrics(
  metrics: Metrics,
  change: Reconfiguration,
): Promise<MetricsChange> {
  const { catalog } = metrics;
  const enabledIn = (env: MetricsEnvironment | undefined): Set<string> =>
    new Set(env === undefined ? [] : (env.checks ?? change.checks.map((c) => c.name)));
  const before = new Map(change.previous.map((env) => [env.name, env]));
  const after = new Map(change.next.map((env) => [env.name, env]));

  // Histograms whose bounds follow the configuration, made anew when they moved.
  const rebuilt: string[] = [];
  const rebuiltKeys = new Set<string>();
  for (const [key, def] of Object.entries(catalog.definitions)) {
    if (def.type !== 'histogram') continue;
    const owner = catalog.owner.get(key);
    const old = bucketsOf(def, change.previous, owner);
    const fresh = bucketsOf(def, change.next, owner);
    if (old.length === fresh.length && old.every((bound, i) => bound === fresh[i])) continue;
    metrics.registry.removeSingleMetric(def.name);
    (metrics as unknown as Record<string, Handle>)[key] = createHandle(
      def,
      metrics.registry,
      change.next,
      owner,
    );
    rebuilt.push(def.name);
    rebuiltKeys.add(key);
  }

  // Series of removed environments, and of checks an environment no longer runs.
  for (const [name, env] of before) {
    const gone = after.get(name);
    const stopped = [...enabledIn(env)].filter((check) => !enabledIn(gone).has(check));
    if (gone !== undefined && stopped.length === 0) continue;
    for (const [key, def] of Object.entries(catalog.definitions)) {
      if (!def.labels.includes('environment') || rebuiltKeys.has(key)) continue;
      const owner = catalog.owner.get(key);
      const checkLabel = def.labels.includes('check');
      if (gone !== undefined && !(owner !== undefined && stopped.includes(owner)) && !checkLabel)
        continue;
      const handle = handleOf(metrics, key);
      if (handle === undefined) continue;
      await removeSeries(handle, def.labels, (labels) => {
        if (labels['environment'] !== name) return false;
        if (gone === undefined || (owner !== undefined && stopped.includes(owner))) return true;
        return checkLabel && stopped.includes(labels['check'] ?? '');
      });
    }
  }

  // Series of added environments and newly enabled checks, from 0; a rebuilt family everywhere.
  for (const env of change.next) {
    const checks = change.checks.filter((check) => enabledIn(env).has(check.name));
    const old = before.get(env.name);
    if (old === undefined) {
      zeroInitialise(metrics, env, checks);
      continue;
    }
    const started = checks.filter((check) => !enabledIn(old).has(check.name));
    const startedNames = new Set(started.map((check) => check.name));
    if (started.length > 0) {
      // Only the families a started check owns or labels with its name: the others already
      // count, and zeroing a live histogram would reset it.
      zeroInitialise(metrics, env, started, (key, def) => {
        const owner = catalog.owner.get(key);
        if (owner !== undefined) return startedNames.has(owner);
        return def.labels.includes('check') && !def.labels.includes('operation');
      });
      const before = change.checks.filter((check) => enabledIn(old).has(check.name));
      if (createsSessions(started) && !createsSessions(before))
        metrics.syntheticSessionsOpen.set({ environment: env.name }, 0);
    }
    if (rebuiltKeys.size > 0) zeroInitialise(metrics, env, checks, (key) => rebuiltKeys.has(key));
  }
  return { rebuilt };
}

/** Removes every series of `handle` whose labels `matches` accepts. */
async function removeSeries(
  handle: Handle,
  labelNames: readonly string[],
  matches: (labels: Record<string, string>) => boolean,
): Promise<void> {
  const { values } = await handle.get();
  const seen = new Set<string>();
  for (const value of values) {
    // A histogram reports each bucket (with `le`), its sum and its count: one series to remove.
    const labels: Record<string, string> = {};
    for (const name of labelNames) {
      const label = (value.labels as Record<string, string | number | undefined>)[name];
      if (label !== undefined) labels[name] = String(label);
    }
    const key = JSON.stringify(labels);
    if (seen.has(key) || !matches(labels)) continue;
    seen.add(key);
    handle.remove(labels);
  }
}
