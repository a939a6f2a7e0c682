/**
 * What the daemon still records of an environment a reload removed (docs/configuration.md,
 * "Reload"): its series are gone, so its runs and gauges are dropped, but its open sessions and a
 * session nobody can close are counted whatever the configuration says.
 */
import { describe, expect, it } from 'vitest';
import { fromRemovedEnvironment } from '../../src/daemon.js';
import type { MeasurementEvent } from '../../src/measurement/messages.js';

const configured = new Set(['production']);

const about = (environment: string): MeasurementEvent[] => [
  { type: 'skip', environment, check: 'ping', reason: 'overlap' },
  { type: 'abandoned', environment, check: 'lifecycle' },
  { type: 'follow_up', environment, check: 'ping', event: { type: 'ended', end: 'recovered' } },
];

describe('events of a removed environment', () => {
  it.each(about('sandbox'))('drops $type of an environment no longer configured', (event) => {
    expect(fromRemovedEnvironment(event, configured)).toBe(true);
  });

  it.each(about('production'))('keeps $type of a configured environment', (event) => {
    expect(fromRemovedEnvironment(event, configured)).toBe(false);
  });

  it('keeps the open-session count of a removed environment: the ledger may still hold them', () => {
    const event: MeasurementEvent = { type: 'sessions_open', environment: 'sandbox', count: 1 };
    expect(fromRemovedEnvironment(event, configured)).toBe(false);
  });

  it('keeps an unrecoverable session of a removed environment: it must still page', () => {
    const event: MeasurementEvent = { type: 'session_unrecoverable', environment: 'sandbox' };
    expect(fromRemovedEnvironment(event, configured)).toBe(false);
  });
});
