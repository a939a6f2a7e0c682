import { describe, expect, it } from 'vitest';
import {
  accept,
  CLOSING,
  countBySeverity,
  LEARNING,
  newOperationDrift,
  observe,
  type OperationDrift,
} from '../../src/drift/tracker.js';
import { exampleAt } from '../../src/drift/example.js';
import { creation, response, TOKEN } from './bodies.js';

const START = Date.parse('2026-11-28T00:00:00Z');
const MINUTE = 60_000;

/** A drift whose baseline learned from healthy answers, one a minute, until it settled. */
function settled(): { drift: OperationDrift; minute: number } {
  const drift = newOperationDrift(new Date(START));
  let minute = 0;
  while (drift.learningSince !== null) {
    observe(drift, { response: response(creation()), now: new Date(START + minute * MINUTE) });
    minute += 1;
  }
  return { drift, minute };
}

describe('the drift of an operation over time', () => {
  it('learns its baseline until both the response count and the time are passed', () => {
    const { drift, minute } = settled();
    expect(minute).toBe(Math.max(LEARNING.responses, LEARNING.ms / MINUTE + 1));
    expect(drift.baseline.responses).toBe(minute);
    expect(drift.differences).toEqual({});
  });

  it('opens a difference at its first sighting, with a redacted example, and keeps its date', () => {
    const { drift, minute } = settled();
    const drifted = creation({ qualify_status: 'throttled' });
    const first = new Date(START + minute * MINUTE);
    expect(observe(drift, { response: response(drifted), now: first })).toBe(true);
    const later = new Date(first.getTime() + MINUTE);
    expect(observe(drift, { response: response(drifted), now: later })).toBe(false);
    expect(Object.values(drift.differences)).toEqual([
      expect.objectContaining({
        kind: 'new_value',
        path: 'qualify_status',
        firstSeen: first.toISOString(),
        lastSeen: later.toISOString(),
        example: '"throttled"',
      }),
    ]);
    expect(countBySeverity(drift)).toEqual({ breaking: 0, warning: 1, info: 0 });
  });

  it('closes a difference once unseen for enough responses and enough time', () => {
    const { drift, minute } = settled();
    let t = START + minute * MINUTE;
    observe(drift, { response: response(creation({ extra: 1 })), now: new Date(t) });
    expect(countBySeverity(drift).info).toBe(1);
    for (let i = 0; i < CLOSING.responses; i += 1) {
      t += MINUTE;
      observe(drift, { response: response(creation()), now: new Date(t) });
    }
    expect(countBySeverity(drift).info).toBe(1);
    t += CLOSING.ms;
    expect(observe(drift, { response: response(creation()), now: new Date(t) })).toBe(true);
    expect(drift.differences).toEqual({});
  });

  it('accepting makes what is seen the baseline: the same answer is no longer a difference', () => {
    const { drift, minute } = settled();
    const drifted = creation({ qualify_status: 'throttled', extra: 1 });
    const now = new Date(START + minute * MINUTE);
    observe(drift, { response: response(drifted), now });
    expect(countBySeverity(drift)).toEqual({ breaking: 0, warning: 1, info: 1 });
    accept(drift, 'ops@host', now);
    expect(drift.accepted).toEqual({ at: now.toISOString(), by: 'ops@host' });
    observe(drift, { response: response(drifted), now: new Date(now.getTime() + MINUTE) });
    expect(drift.differences).toEqual({});
    const other = creation({ qualify_status: 'paused' });
    observe(drift, { response: response(other), now: new Date(now.getTime() + 2 * MINUTE) });
    expect(countBySeverity(drift).warning).toBe(1);
  });
});

describe('the example of a difference', () => {
  it('is the value at the path, with tokens, keys and the API key redacted, and bounded', () => {
    const body = creation({
      data: [{ name: 'x'.repeat(500), api_key: 'k', type: 'fcc_provider' }],
    });
    expect(exampleAt(response(body), 'meta.session_token')).toBe('"[redacted]"');
    expect(exampleAt(response(body), 'data[].api_key')).toBe('"[redacted]"');
    expect(exampleAt(response(body), 'meta')).not.toContain(TOKEN);
    expect(exampleAt(response(body), 'data[]').length).toBeLessThanOrEqual(200);
    expect(exampleAt(response(body), 'header:session_token')).toBe('[redacted]');
    expect(exampleAt(response(body), 'header:content-type')).toBe(
      'application/json; charset=utf-8',
    );
    const redact = (text: string) => text.replaceAll('Main', '***');
    expect(exampleAt(response(body), 'meta.session_params.street1', redact)).toBe('"1 *** St"');
    expect(exampleAt(response(body, { bytes: 77 }), '(size)')).toBe('77 bytes');
    expect(exampleAt(response([{ a: 1 }]), '(root)[].a')).toBe('1');
  });
});
