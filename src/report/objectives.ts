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
import { SLO_SPEC_PATH, readSloSpecs, type SloSpec } from './sloth-spec.js';

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

/** Every document of a spec file, read as `validate-slo` reads it; a problem is a ReportError. */
export function parseSpecs(text: string, source: string): SloSpec[] {
  const read = readSloSpecs(text, source);
  if (read.problems.length > 0) throw new ReportError(read.problems.join('; '));
  return read.specs;
}

/** The spec's objectives as ratios, by name; the spec is read as the rules' generator reads it. */
export function parseObjectives(text: string, source: string): Objectives {
  return objectivesOf(parseSpecs(text, source));
}

export function objectivesOf(specs: readonly SloSpec[]): Objectives {
  return new Map(specs.flatMap((spec) => spec.slos.map((slo) => [slo.name, slo.objective / 100])));
}

/** The spec file's documents; none without a file. */
export async function loadSpecs(path: string | null): Promise<SloSpec[]> {
  if (path === null) return [];
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ReportError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  return parseSpecs(text, path);
}

/** 1 − (1 − sli) / (1 − objective): the share of the period's error budget left. */
export function budgetRemaining(sli: number | null, objective: number | undefined): number | null {
  if (sli === null || objective === undefined) return null;
  return 1 - (1 - sli) / (1 - objective);
}
