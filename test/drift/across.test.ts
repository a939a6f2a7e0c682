import { describe, expect, it } from 'vitest';
import { ACROSS_LASTING_MS, compareEnvironments, dateAcross } from '../../src/drift/across.js';
import { takeFacts, type EnvironmentFacts } from '../../src/drift/facts.js';
import { learn } from '../../src/drift/shape.js';
import { newOperationDrift, type OperationDrift } from '../../src/drift/tracker.js';
import { creation, response } from './bodies.js';

const NOW = new Date('2026-11-28T10:00:00Z');

/** An operation that saw `body` `times` times since its baseline settled. */
function seen(body: unknown, times = 6): OperationDrift {
  const drift = newOperationDrift(NOW);
  drift.learningSince = null;
  for (let i = 0; i < times; i += 1) learn(drift.seen, response(body));
  return drift;
}

function facts(body: unknown): EnvironmentFacts {
  const known: EnvironmentFacts = {};
  // The provider list's answer is the one that lists providers (`listsProviders`).
  takeFacts(known, body, NOW, 'providers' in (body as object));
  return known;
}

describe('sandbox against production', () => {
  it('finds nothing where the environments answer alike', () => {
    const operations = {
      production: { create_session: seen(creation()) },
      sandbox: { create_session: seen(creation()) },
    };
    const list = { providers: [{ id: 'p1', name: 'Fibre Co' }] };
    const known = { production: facts(list), sandbox: facts(list) };
    expect(compareEnvironments({ operations, facts: known })).toEqual([]);
  });

  it('says which environment sends a field, has which data set, and lists which provider', () => {
    const operations = {
      production: { create_session: seen(creation()) },
      sandbox: { create_session: seen(creation({ migration_notice: 'v2' })) },
    };
    const known = {
      production: {
        ...facts(creation()),
        ...facts({
          providers: [
            { id: 'p1', name: 'Fibre Co' },
            { id: 'p2', name: 'Cable Co' },
          ],
        }),
      },
      sandbox: {
        ...facts(creation({ meta: { service_data_set: '20261201' } })),
        ...facts({ providers: [{ id: 'p1', name: 'Fibre Co Inc' }] }),
      },
    };
    expect(compareEnvironments({ operations, facts: known })).toEqual([
      {
        key: 'shape create_session migration_notice',
        kind: 'shape',
        operation: 'create_session',
        subject: 'migration_notice',
        has: { production: 'absent', sandbox: 'string' },
      },
      {
        key: 'data_set',
        kind: 'data_set',
        subject: 'service_data_set',
        has: { production: '20261101', sandbox: '20261201' },
      },
      {
        key: 'provider_renamed p1',
        kind: 'provider_renamed',
        subject: 'p1',
        has: { production: 'Fibre Co', sandbox: 'Fibre Co Inc' },
      },
      {
        key: 'provider_only_in p2',
        kind: 'provider_only_in',
        subject: 'p2',
        has: { production: 'Cable Co', sandbox: 'absent' },
      },
    ]);
  });

  it('does not take a field seen too few times, or an optional one that comes and goes, for a difference', () => {
    const rare = seen(creation(), 6);
    learn(rare.seen, response(creation({ security_note: 'x' })));
    const operations = {
      production: { create_session: rare },
      sandbox: { create_session: seen(creation(), 3) },
    };
    expect(compareEnvironments({ operations, facts: {} })).toEqual([]);
  });

  it('dates each difference from its first finding, lasting after an hour, forgotten once gone', () => {
    const since: Record<string, string> = {};
    const found = [{ key: 'data_set', kind: 'data_set' as const, subject: 's', has: {} }];
    expect(dateAcross(found, since, NOW)[0]).toMatchObject({
      since: NOW.toISOString(),
      lasting: false,
    });
    const later = new Date(NOW.getTime() + ACROSS_LASTING_MS);
    expect(dateAcross(found, since, later)[0]).toMatchObject({
      since: NOW.toISOString(),
      lasting: true,
    });
    expect(dateAcross([], since, later)).toEqual([]);
    expect(since).toEqual({});
  });
});
