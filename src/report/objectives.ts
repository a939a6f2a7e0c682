/**
 * The objectives the report measures against, from the checked-in spec in Sloth's prometheus/v1
 * format (slo/isa-monitor.sloth.yaml; docs/alerts.md, "Objectives"): the one place an objective
 * changes.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReportError } from './prometheus.js';
import { SLO_SPEC_PATH, parseSloSpec, type SloSpec } from './sloth-spec.js';

/** Objective name → target ratio (99.5 → 0.995). */
export type Objectives = ReadonlyMap<string, number>;

/**
 * The spec shipped with this checkout or package: the nearest `slo/isa-monitor.sloth.yaml` above
 * this module, whether it runs from src/ or from the bundle in dist/.
 */
export function defaultSpecPath(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, SLO_SPEC_PATH);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The spec's objectives as ratios; the spec is read as the rules' generator reads it. */
export function parseObjectives(text: string, source: string): Objectives {
  let spec: SloSpec;
  try {
    spec = parseSloSpec(text, source);
  } catch (err) {
    throw new ReportError((err as Error).message);
  }
  return new Map(spec.slos.map((slo) => [slo.name, slo.objective / 100]));
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
