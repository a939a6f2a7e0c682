import { describe, expect, it } from 'vitest';
import {
  decodeBody,
  extractErrorMessage,
  extractRequestId,
  flattenHeaders,
  isJsonContentType,
  INVALID_RETRY_AFTER,
  parseRetryAfter,
} from '../../src/api/response.js';
import { redactor } from '../../src/api/transport-errors.js';

const none = (text: string): string => text;

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');

  it.each([
    ['60', 60_000],
    ['0', 0],
    [' 120 ', 120_000],
    ['Sun, 01 Mar 2026 12:01:30 GMT', 90_000], // IMF-fixdate
    ['Sunday, 01-Mar-26 12:00:10 GMT', 10_000], // RFC 850
    ['Sun Mar  1 12:00:05 2026', 5_000], // asctime, implicitly GMT
    ['Sun, 01 Mar 2026 11:00:00 GMT', 0], // in the past: retry now, never negative
  ])('reads %j as %d ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it('reads an absent header as null', () => {
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });

  // Finding 3 of the "close every session" issue: every shape has a defined meaning.
  it.each([
    ['1.5', 1_500], // fractional delta-seconds, rounded up to the millisecond
    ['0.0001', 1],
    ['99999999999', 99_999_999_999_000], // huge: kept; the gate clamps it
    ['9'.repeat(400), Number.MAX_SAFE_INTEGER], // beyond a number: the largest safe one
  ])('reads %j as %d ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it.each(['', '-5', '-0.5', 'soon', '60s', '1e3', 'Funday, 99 Foo 2026 GMT', 'Mon, garbage'])(
    "marks %j as present but invalid (the client reads it as the spec's 60 s)",
    (value) => {
      expect(parseRetryAfter(value, now)).toBe(INVALID_RETRY_AFTER);
    },
  );
});

describe('isJsonContentType', () => {
  it.each([
    ['application/json', true],
    ['Application/JSON; charset=utf-8', true],
    ['application/problem+json', true],
    ['application/vnd.api+json; charset=utf-8', true],
    ['text/html', false],
    ['text/json-ish', false],
    ['application/jsonp', false],
    [undefined, false],
  ])('%j → %s', (value, expected) => {
    expect(isJsonContentType(value)).toBe(expected);
  });
});

describe('decodeBody', () => {
  it('parses JSON', () => {
    expect(decodeBody(Buffer.from('[1,2]'), 'application/json', none, none)).toEqual({
      body: [1, 2],
      bodyError: null,
      bodySnippet: null,
    });
  });

  it('flags JSON text without a JSON content type as not_json', () => {
    const decoded = decodeBody(Buffer.from('{"a":1}'), undefined, none, none);
    expect(decoded).toEqual({ body: undefined, bodyError: 'not_json', bodySnippet: '{"a":1}' });
  });

  it('cuts the snippet to 200 characters', () => {
    const decoded = decodeBody(Buffer.from('z'.repeat(1_000)), 'text/plain', none, none);
    expect(decoded.bodySnippet).toHaveLength(200);
  });

  it('redacts the key from a JSON body before parsing it', () => {
    const redact = redactor('secret-key-123');
    const decoded = decodeBody(
      Buffer.from('{"echo":"Bearer secret-key-123"}'),
      'application/json',
      redact,
      redact,
    );
    expect(decoded.body).toEqual({ echo: 'Bearer [redacted]' });
  });
});

describe('extractRequestId', () => {
  it('takes request_id from an error envelope', () => {
    expect(extractRequestId(500, { message: 'x', request_id: 'abc-1' }, none)).toBe('abc-1');
  });

  it('ignores success responses, non-strings and missing ids', () => {
    expect(extractRequestId(200, { request_id: 'abc' }, none)).toBeNull();
    expect(extractRequestId(400, { request_id: 42 }, none)).toBeNull();
    expect(extractRequestId(400, { message: 'x' }, none)).toBeNull();
    expect(extractRequestId(400, 'request_id', none)).toBeNull();
    expect(extractRequestId(400, { request_id: '  ' }, none)).toBeNull();
  });

  it('keeps a hostile id short and on one line', () => {
    const id = extractRequestId(400, { request_id: `a\nb${'c'.repeat(500)}` }, none);
    expect(id?.startsWith('a b')).toBe(true);
    expect(id?.length).toBeLessThanOrEqual(200);
  });
});

describe('extractErrorMessage', () => {
  it('keeps the envelope message of an error, single-line, bounded and without the key', () => {
    const redact = redactor('secret-key-123');
    const message = `<b>down</b>\n\tfor secret-key-123 ${'x'.repeat(500)}`;
    const text = extractErrorMessage(
      503,
      { message, request_status: 'error', request_id: 'r' },
      redact,
    );
    expect(text?.startsWith('<b>down</b> for [redacted] xxx')).toBe(true);
    expect(text).toHaveLength(200);
    expect(extractErrorMessage(200, { message: 'ok' }, none)).toBeNull();
    expect(extractErrorMessage(500, { message: 7 }, none)).toBeNull();
    expect(extractErrorMessage(500, '<html>', none)).toBeNull();
  });
});

describe('flattenHeaders', () => {
  it('lower-cases names and joins repeated values', () => {
    expect(
      flattenHeaders({ 'Set-Cookie': ['a=1', 'b=2'], Etag: '"x"', gone: undefined }, none),
    ).toEqual({
      'set-cookie': 'a=1, b=2',
      etag: '"x"',
    });
  });
});
