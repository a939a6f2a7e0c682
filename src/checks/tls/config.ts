/**
 * The certificate check's section, `environments[].tls` (docs/configuration.md): on by default
 * where there is a certificate to look at; one handshake an hour costs nothing.
 */
import { z } from 'zod';
import { checkSection } from '../../config/section.js';
import { DEFAULT_MIN_DAYS } from './inspect.js';

export const section = checkSection({
  name: 'tls',
  defaults: {
    enabled: (environment) => environment.baseUrl.startsWith('https:'),
    interval: '1h',
    timeout: '15s',
  },
  shape: {
    min_days: z
      .number({ error: 'must be a whole number of days of at least 0' })
      .int({ error: 'must be a whole number of days of at least 0' })
      .min(0, { error: 'must be a whole number of days of at least 0' })
      .default(DEFAULT_MIN_DAYS),
  },
  docs: {
    summary:
      "the certificate check: one TLS handshake to the base URL's host, no API request, no API key, no request-budget token (docs/metrics.md, `isa_tls_*`; docs/alerts.md, `IsaTlsCertificateExpiring`, `IsaTlsCertificateInvalid`)",
    default: 'on for an `https` base URL, off for `http`',
    keys: {
      enabled: {
        default: '`true` for `https`, `false` for `http`',
        meaning:
          'switched on for an `http` base URL, every run fails as `handshake_failed` (`NOT_HTTPS`)',
      },
      request_timeout: { meaning: 'bounds the handshake' },
      min_days: {
        type: 'integer',
        meaning:
          'at least 0; a run whose chain ends sooner fails as `expiring` (the alert rules ticket at 21 days and page at 3, whatever this is)',
      },
    },
  },
  toConfig: (parsed) => ({ minDays: parsed.min_days }),
});
