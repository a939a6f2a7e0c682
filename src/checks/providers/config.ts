/** The providers check's configuration: only the keys every check has (docs/configuration.md). */
import { checkSection } from '../../config/section.js';

// On unless configured off: one read-only request every 15 minutes, no assumption about data.
export const section = checkSection({
  name: 'providers',
  defaults: { enabled: true, interval: '15m', timeout: '30s' },
  shape: {},
  docs: {
    summary:
      "the `GET /service_providers` check: schema, the spec's ordering, count by type, content changes. **On by default** (see below)",
    keys: { request_timeout: { meaning: 'a run is one request' } },
  },
  toConfig: () => ({}),
});
