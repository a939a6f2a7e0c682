/**
 * The providers check's metric families and how one run's facts become their samples
 * (docs/metrics.md, "providers").
 */
import { type MetricSink } from '../../kernel/check.js';
import { initialResults } from '../shared/request.js';
import { PROVIDERS_RESULTS, PROVIDER_TYPES, type ProvidersFacts } from './facts.js';

export const metrics = {
  providersRuns: {
    name: 'isa_providers_runs_total',
    help: 'Provider-list checks by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(PROVIDERS_RESULTS) },
  },
  providersListed: {
    name: 'isa_providers_listed',
    help: 'Providers in the latest valid GET /service_providers list, by type.',
    type: 'gauge',
    labels: ['environment', 'type'],
  },
  providersListChanges: {
    name: 'isa_providers_list_changes_total',
    help: 'Times the content of the provider list differed from the previous valid list.',
    type: 'counter',
    labels: ['environment'],
  },
} as const;

/** One run's facts as metrics. */
export function recordProviders(facts: ProvidersFacts, sink: MetricSink): void {
  sink.inc(metrics.providersRuns, { result: facts.result });
  if (facts.counts) {
    for (const type of PROVIDER_TYPES) {
      sink.set(metrics.providersListed, { type }, facts.counts[type]);
    }
  }
  if (facts.changed) sink.inc(metrics.providersListChanges, {});
}
