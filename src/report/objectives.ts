/**
 * The objectives the report measures against, from the checked-in spec in Sloth's prometheus/v1
 * format (slo/isa-monitor.sloth.yaml; docs/alerts.md, "Objectives"): the one place an objective
 * changes.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { ReportError } from './prometheus.js';

/** Objective name → target ratio (99.5 → 0.995). */
export type Objectives = ReadonlyMap<string, number>;

export const SPEC_PATH = join('slo', 'isa-monitor.sloth.yaml');

/**
 * The spec shipped with this checkout or package: the nearest `slo/isa-monitor.sloth.yaml` above
 * this module, whether it runs from src/ or from the bundle in dist/.
 */
export function defaultSpecPath(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, SPEC_PATH);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

export function parseObjectives(text: string, source: string): Objectives {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new ReportError(`${source}: not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const slos = (doc as { slos?: unknown } | null)?.slos;
  if (!Array.isArray(slos))
    throw new ReportError(`${source}: no "slos" list (Sloth prometheus/v1)`);
  const out = new Map<string, number>();
  for (const slo of slos as Array<{ name?: unknown; objective?: unknown }>) {
    if (typeof slo.name !== 'string' || typeof slo.objective !== 'number') {
      throw new ReportError(`${source}: every slo needs a name and a numeric objective`);
    }
    if (!(slo.objective > 0 && slo.objective < 100)) {
      throw new ReportError(`${source}: ${slo.name}: objective must be between 0 and 100`);
    }
    out.set(slo.name, slo.objective / 100);
  }
  return out;
}

export async function loadObjectives(path: string | null): Promise<Objectives> {
  if (path === null) return new Map();
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ReportError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  return parseObjectives(text, path);
}

/** 1 − (1 − sli) / (1 − objective): the share of the period's error budget left. */
export function budgetRemaining(sli: number | null, objective: number | undefined): number | null {
  if (sli === null || objective === undefined) return null;
  return 1 - (1 - sli) / (1 - objective);
}
