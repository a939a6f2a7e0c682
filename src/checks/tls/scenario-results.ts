/**
 * The tls check in rule-test scenarios (src/checks/shared/scenario.ts): each event of its
 * timeline is one certificate check that finished at m·60 + 30 s. `N` read a verified chain that
 * ends N days later, `uN` an untrusted one and `mN` one for another host name (both still with N
 * days left), `timeout` read nothing, and `-` is no run (the check runs hourly: `N 59*-`). A
 * chain event may end in `/cM`: the environment's client certificate ends M days later.
 */
import type { CheckResult } from '../../kernel/check.js';
import {
  NO_EVENT,
  REFERENCE_SECONDS,
  expandTimeline,
  referenceResult,
  wholeNumber,
  type RecordedEvent,
  type ScenarioResults,
} from '../shared/scenario.js';
import { tlsCheck, type TlsCheckFacts } from './index.js';
import {
  DEFAULT_MIN_DAYS,
  classifyCertificate,
  noChain,
  type ChainObservation,
  type TlsFacts,
} from './inspect.js';

const DAY_SECONDS = 86_400;

export const scenarioResults: ScenarioResults = {
  sample: { tls: '20 69*-' },
  events({ name: environment, timeline, minutes }) {
    const events: RecordedEvent[] = [];
    expandTimeline(timeline ?? '', minutes, NO_EVENT).forEach((event, m) => {
      if (event === NO_EVENT) return;
      const at = m * 60 + 30;
      const result = tlsResult(environment, event, at);
      events.push({ at, record: (r) => r.recordResult(result) });
    });
    return events;
  },
};

/** One certificate check that finished at scenario second `at`. */
function tlsResult(environment: string, event: string, at: number): CheckResult<TlsFacts> {
  const start = at - REFERENCE_SECONDS;
  if (event === 'timeout') {
    return referenceResult(environment, tlsCheck, noChain('timeout', 'TIMEOUT', 15_000), start);
  }
  const [chainEvent = '', clientDays] = event.split('/c');
  const kind = /^[um]/.test(chainEvent) ? chainEvent.slice(0, 1) : '';
  const days = wholeNumber('tls', chainEvent.slice(kind.length), ', uN, mN, N/cM, timeout or -');
  const expired = days <= 0;
  // The chain as a handshake would read it; the check's own classification judges it.
  const chain: ChainObservation = {
    chainLength: 2,
    earliestNotAfter: at + days * DAY_SECONDS,
    authorized: kind !== 'u' && !expired,
    authorizationError: kind === 'u' ? 'SELF_SIGNED_CERT_IN_CHAIN' : null,
    hostnameMatches: kind !== 'm',
    hostnameError: kind === 'm' ? 'ERR_TLS_CERT_ALTNAME_INVALID' : null,
  };
  const facts: TlsCheckFacts = {
    ...chain,
    clientCertNotAfter:
      clientDays === undefined
        ? null
        : at + wholeNumber('tls', clientDays, ' after /c') * DAY_SECONDS,
    ...classifyCertificate(chain, { nowSeconds: at, minDays: DEFAULT_MIN_DAYS }),
    verified: chain.authorized && chain.hostnameMatches,
    durationMs: 20,
  };
  return referenceResult(environment, tlsCheck, facts, start);
}
