/**
 * The daemon's logger: known secret fields are redacted by path whatever their value, every
 * configured key is scrubbed from every line wherever it appears, and held lines keep their order.
 */
import { describe, expect, it } from 'vitest';
import { createLogger, holdLines, scrub } from '../src/logging.js';

const KEY = 'sk-live-0123456789abcdef';

function capture(secrets: string[] = [KEY], level = 'debug') {
  const lines: string[] = [];
  const logger = createLogger({
    level,
    secrets,
    destination: { write: (l) => void lines.push(l) },
  });
  const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logger, lines, parsed };
}

describe('scrub', () => {
  it('replaces every occurrence of every secret', () => {
    expect(scrub(`a ${KEY} b ${KEY}c other-secret`, [KEY, 'other-secret'])).toBe(
      'a [REDACTED] b [REDACTED]c [REDACTED]',
    );
    expect(scrub('nothing to hide', [KEY])).toBe('nothing to hide');
  });
});

describe('createLogger', () => {
  it('scrubs a configured key from the message, nested fields and errors', () => {
    const { logger, lines } = capture();
    logger.warn(
      { response: { body: { echoed: `Bearer ${KEY}` } }, err: new Error(`refused ${KEY}`) },
      `the API said ${KEY}`,
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(KEY);
    expect(lines[0]?.match(/\[REDACTED\]/g)?.length).toBeGreaterThanOrEqual(3);
  });

  it('redacts the known secret fields by path, even holding values it was never told about', () => {
    const { logger, parsed } = capture([]);
    logger.info(
      {
        apiKey: 'unknown-1',
        environment: { apiKey: 'unknown-2', name: 'production' },
        authorization: 'Bearer unknown-3',
        headers: { authorization: 'Bearer unknown-4', accept: 'application/json' },
        request: { headers: { authorization: 'Bearer unknown-5' } },
        config: { environments: [{ name: 'a', apiKey: 'unknown-6' }] },
      },
      'startup',
    );
    const [line] = parsed();
    expect(JSON.stringify(line)).not.toMatch(/unknown-\d/);
    expect(line).toMatchObject({
      apiKey: '[REDACTED]',
      environment: { apiKey: '[REDACTED]', name: 'production' },
      authorization: '[REDACTED]',
      headers: { authorization: '[REDACTED]', accept: 'application/json' },
      request: { headers: { authorization: '[REDACTED]' } },
      config: { environments: [{ name: 'a', apiKey: '[REDACTED]' }] },
    });
  });

  it('ignores secrets too short to scrub without mangling ordinary text', () => {
    const { logger, parsed } = capture(['abc']);
    logger.info({ value: 'abcdef' }, 'abc');
    expect(parsed()[0]).toMatchObject({ value: 'abcdef', msg: 'abc' });
  });

  it('writes only lines at or above its level', () => {
    const { logger, parsed } = capture([KEY], 'warn');
    logger.info('quiet');
    logger.warn('loud');
    expect(parsed().map((l) => l['msg'])).toEqual(['loud']);
  });
});

describe('holdLines', () => {
  it('holds lines until released, then writes them in order, and later ones straight through', () => {
    const out: string[] = [];
    const held = holdLines({ write: (l) => void out.push(l) });
    held.write('one\n');
    held.write('two\n');
    expect(out).toEqual([]);
    out.push('banner\n');
    held.release();
    held.write('three\n');
    held.release();
    expect(out).toEqual(['banner\n', 'one\n', 'two\n', 'three\n']);
  });
});
