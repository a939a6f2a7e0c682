/**
 * The provider-list check: `GET /service_providers`. It validates the list against the API's
 * schema and the spec's ordering promise (total_residential_units descending; each supplemental
 * brand right after its parent, repeating the parent's fcc_name and units), exports how many
 * providers of each type the list holds, and counts changes of its content.
 *
 * Whether a list that shrank is a problem depends on how much it shrank over how long: the alert
 * rule judges that from `isa_providers_listed` (docs/alerts.md, `IsaProviderListShrank`). An empty
 * list fails the run: the spec describes no state in which no provider is tracked.
 */
import { PROVIDERS_OPERATIONS } from './endpoint.js';
import { defineCheck } from '../../kernel/check.js';
import { section } from './config.js';
import { metrics, recordProviders } from './metrics.js';
import { runProviders } from './run.js';
import { providersSummary, providersTrace } from './presentation.js';

export {
  PROVIDERS_RESULTS,
  type ProvidersResult,
  PROVIDER_TYPES,
  type ProviderType,
  type ProvidersFacts,
} from './facts.js';
export { orderViolation } from './run.js';

export const providersCheck = defineCheck({
  name: 'providers',
  config: section,
  metrics,
  operations: PROVIDERS_OPERATIONS,
  contractChecks: ['response_schema', 'provider_order'],
  summaryKeys: ['providers'],
  run: runProviders,
  summary: providersSummary,
  trace: providersTrace,
  record: recordProviders,
});
