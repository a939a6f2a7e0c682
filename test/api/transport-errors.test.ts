import { describe, expect, it } from 'vitest';
import {
  classifyTransportError,
  errorCode,
  redactor,
  sanitizeText,
} from '../../src/api/transport-errors.js';

const none = (text: string): string => text;

function coded(code: string, message = 'boom'): Error {
  return Object.assign(new Error(message), { code });
}

describe('classifyTransportError', () => {
  it.each([
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout'],
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout'],
    ['UND_ERR_BODY_TIMEOUT', 'timeout'],
    ['ETIMEDOUT', 'timeout'],
    ['REQUEST_TIMEOUT', 'timeout'],
    ['UND_ERR_ABORTED', 'aborted'],
    ['ABORT_ERR', 'aborted'],
    ['REQUEST_ABORTED', 'aborted'],
    ['UND_ERR_SOCKET', 'network_error'],
    ['ECONNREFUSED', 'network_error'],
    ['ECONNRESET', 'network_error'],
    ['ENOTFOUND', 'network_error'],
    ['EAI_AGAIN', 'network_error'],
    ['EPIPE', 'network_error'],
    ['UND_ERR_CLOSED', 'network_error'],
    ['CERT_HAS_EXPIRED', 'network_error'],
  ])('%s → %s', (code, reason) => {
    expect(classifyTransportError(coded(code), none)).toMatchObject({ reason, code });
  });

  it('goes by the code, never by the message', () => {
    const misleading = coded('UND_ERR_HEADERS_TIMEOUT', 'connect ECONNREFUSED aborted');
    expect(classifyTransportError(misleading, none).reason).toBe('timeout');
    expect(classifyTransportError(new Error('timeout'), none)).toMatchObject({
      reason: 'network_error',
      code: 'UNKNOWN',
    });
  });

  it('recognises DOM-style abort and timeout errors by name', () => {
    expect(classifyTransportError(new DOMException('x', 'AbortError'), none)).toMatchObject({
      reason: 'aborted',
      code: 'AbortError',
    });
    expect(classifyTransportError(new DOMException('x', 'TimeoutError'), none).reason).toBe(
      'timeout',
    );
  });

  it('takes the code of the first part of an AggregateError (happy eyeballs)', () => {
    const err = new AggregateError([coded('ECONNREFUSED'), coded('EHOSTUNREACH')], 'x');
    expect(classifyTransportError(err, none)).toMatchObject({
      reason: 'network_error',
      code: 'ECONNREFUSED',
    });
  });

  it('sanitizes and redacts the message', () => {
    const err = coded('ECONNRESET', `reset\r\nby http://u:p@h/ with Bearer k3y-k3y-k3y`);
    expect(classifyTransportError(err, redactor('k3y-k3y-k3y')).message).toBe(
      'reset by http://h/ with Bearer [redacted]',
    );
  });

  it("replaces an internal assertion's text with a fixed message", () => {
    const err = coded('ERR_ASSERTION', 'false == true');
    expect(classifyTransportError(err, none)).toEqual({
      reason: 'network_error',
      code: 'ERR_ASSERTION',
      message: 'the HTTP client rejected a malformed answer',
    });
  });

  it('handles non-errors', () => {
    expect(classifyTransportError('nope', none)).toEqual({
      reason: 'network_error',
      code: 'UNKNOWN',
      message: 'nope',
    });
  });
});

describe('errorCode', () => {
  it('ignores codes that do not look like codes', () => {
    expect(errorCode(coded('has spaces and secrets'))).toBe('UNKNOWN');
    expect(errorCode({ code: 42 })).toBe('UNKNOWN');
    expect(errorCode(null)).toBe('UNKNOWN');
  });

  it('falls back to the cause', () => {
    expect(errorCode(new Error('outer', { cause: coded('ECONNRESET') }))).toBe('ECONNRESET');
  });
});

describe('sanitizeText', () => {
  it('redacts before cutting so no piece of the secret survives', () => {
    const secret = 'abcdefghijklmnop';
    const text = `${'x'.repeat(190)}${secret}`;
    const out = sanitizeText(text, redactor(secret), 200);
    expect(out).not.toContain('abcdefghij');
    expect(out.length).toBeLessThanOrEqual(200);
  });
});
