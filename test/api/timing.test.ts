import { Agent, Pool, buildConnector } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  UndiciAgent,
  UndiciPool,
  buildUndiciConnector,
  connectionOpenedAt,
  connectionPhases,
  parseServerTiming,
  readAt,
} from '../../src/api/timing.js';

describe("undici's modules, loaded without its index", () => {
  it("are undici's own Agent, Pool and buildConnector", () => {
    expect(UndiciAgent).toBe(Agent);
    expect(UndiciPool).toBe(Pool);
    expect(buildUndiciConnector).toBe(buildConnector);
  });
});

describe('parseServerTiming', () => {
  it.each([
    ['sim;dur=12.345', 12.345],
    ['total;dur=30, db;dur=12, app;dur=15', 30],
    ['cache;desc="Cache Read";dur=23.2', 23.2],
    ['app;desc="a, b; dur=999";dur=4', 4], // quoted separators are text
    ['x;dur="7.5"', 7.5],
    ['miss, db;dur=53', 53],
    ['DUR;Dur=3', 3],
  ])('reads %j as %d', (header, expected) => {
    expect(parseServerTiming(header)).toBe(expected);
  });

  it.each([undefined, '', 'miss', 'x;dur=', 'x;dur=-1', 'x;dur=abc', 'x;desc=dur'])(
    'finds nothing in %j',
    (header) => {
      expect(parseServerTiming(header)).toBeNull();
    },
  );
});

describe('connectionPhases', () => {
  it('splits a fresh TLS connection into resolve, connect and tls', () => {
    expect(
      connectionPhases({ startedAt: 100, resolvedAt: 103, connectedAt: 110, secureAt: 130 }, 99),
    ).toEqual({ resolve: 3, connect: 7, tls: 20 });
  });

  it('has no resolve for an IP literal and no tls for plain HTTP', () => {
    expect(connectionPhases({ startedAt: 100, connectedAt: 104 }, 100)).toEqual({ connect: 4 });
  });

  it('times connect from the first connection attempt and resolve from the lookup start', () => {
    expect(
      connectionPhases(
        {
          startedAt: 100,
          lookupStartedAt: 101,
          resolvedAt: 103,
          attemptedAt: 104,
          connectedAt: 110,
        },
        99,
      ),
    ).toEqual({ resolve: 2, connect: 6 });
    expect(connectionPhases({ startedAt: 100, attemptedAt: 101, connectedAt: 104 }, 100)).toEqual({
      connect: 3,
    });
  });

  it('reports nothing for a connection opened before the request (reuse)', () => {
    expect(connectionPhases({ startedAt: 50, connectedAt: 52 }, 100)).toEqual({});
    expect(connectionPhases(undefined, 100)).toEqual({});
  });
});

describe('connectionOpenedAt', () => {
  it("is a name's lookup start, else the first connection attempt", () => {
    expect(
      connectionOpenedAt({ startedAt: 100, lookupStartedAt: 100.2, attemptedAt: 103 }, 99),
    ).toBe(100.2);
    expect(connectionOpenedAt({ startedAt: 100, attemptedAt: 100.4 }, 100)).toBe(100.4);
  });

  it('is when the connector was asked for a connection not seen attempting', () => {
    expect(connectionOpenedAt({ startedAt: 100 }, 100)).toBe(100);
  });

  it('is undefined for a reused connection', () => {
    expect(connectionOpenedAt({ startedAt: 50, attemptedAt: 51 }, 100)).toBeUndefined();
    expect(connectionOpenedAt(undefined, 100)).toBeUndefined();
  });
});

describe('readAt', () => {
  it("is the socket's latest read when it came after the request started", () => {
    expect(readAt({ startedAt: 100, lastReadAt: 104.5 }, 102)).toBe(104.5);
    expect(readAt({ startedAt: 100, lastReadAt: 102 }, 102)).toBe(102);
  });

  it('is undefined for a read before the request, none yet, or an unmeasured connection', () => {
    // On a kept-alive connection the latest read can be the previous answer's.
    expect(readAt({ startedAt: 50, lastReadAt: 90 }, 100)).toBeUndefined();
    expect(readAt({ startedAt: 100 }, 100)).toBeUndefined();
    expect(readAt(undefined, 100)).toBeUndefined();
  });
});
