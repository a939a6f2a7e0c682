/** What a certificate check run finds. */
import type { TlsFacts } from './inspect.js';

/**
 * What a run found: the partner's chain, and the `notAfter` of the environment's client
 * certificate (null without one, or when its files could not be read this run).
 */
export type TlsCheckFacts = TlsFacts & { clientCertNotAfter?: number | null };
