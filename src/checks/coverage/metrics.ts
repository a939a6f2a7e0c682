/**
 * The coverage check's metric families and how one run's facts become their samples
 * (docs/metrics.md, "coverage").
 */
import { type CheckEnvironment, type MetricSink } from '../../kernel/check.js';
import { initialResults } from '../shared/request.js';
import { COVERAGE_RESULTS, type CoverageFacts } from './facts.js';
import type { CoverageConfig } from './config.js';

export const metrics = {
  coverageRuns: {
    name: 'isa_coverage_runs_total',
    help: 'Coverage checks by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(COVERAGE_RESULTS) },
  },
  coverageProviders: {
    name: 'isa_coverage_providers',
    help: 'Providers in the latest valid GET /coverage answer for the configured geography.',
    type: 'gauge',
    labels: ['environment'],
  },
  coverageMinProviders: {
    name: 'isa_coverage_min_providers',
    help: 'Configured least number of providers the coverage answer must hold.',
    type: 'gauge',
    labels: ['environment'],
  },
} as const;


/** One run's facts as metrics. */
export function recordCoverage(facts: CoverageFacts, sink: MetricSink): void {
  sink.inc(metrics.coverageRuns, { result: facts.result });
  if (facts.providers !== null) sink.set(metrics.coverageProviders, {}, facts.providers);
}


/** The configured minimum of providers, as a gauge set at start-up. */
export function describeCoverage(config: CoverageConfig, _environment: CheckEnvironment, sink: MetricSink): void {
  sink.set(metrics.coverageMinProviders, {}, config.minProviders);
}
