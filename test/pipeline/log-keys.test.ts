/**
 * The logger writes each key once per line (pipeline/log.ts): a child re-binding a key, a child of
 * a child, and a log call repeating a bound key all come out with one key and the most specific
 * value; redaction still applies to values moved into a binding.
 */
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger } from '../../pipeline/log.ts';
import { repeatedKeys, topLevelKeys } from './log-lines.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk).trim());
      cb();
    },
  });
  return { lines, logger: createLogger('debug', { destination: stream }) };
}

describe('topLevelKeys (the test helper)', () => {
  it('finds repeated top-level keys and ignores nested ones and strings that look like keys', () => {
    const text = '{"a":1,"b":{"a":2,"c":[{"a":3}]},"s":"\\"a\\":","a":4}';
    expect(topLevelKeys(text)).toEqual(['a', 'b', 's', 'a']);
    expect(repeatedKeys(text)).toEqual(['a']);
    expect(repeatedKeys('{"x":"}","y":"{"}')).toEqual([]);
  });
});

describe('one key, once per line', () => {
  it('a child of a child binding the same key: one key, the innermost value', () => {
    const { lines, logger } = capture();
    logger.child({ venue: 'kalshi', run_id: 'r1' }).child({ venue: 'kalshi-inner' }).info({ n: 1 }, 'synced');
    expect(lines).toHaveLength(1);
    expect(repeatedKeys(lines[0]!)).toEqual([]);
    expect(JSON.parse(lines[0]!)).toMatchObject({ venue: 'kalshi-inner', run_id: 'r1', n: 1, msg: 'synced', service: 'quorum' });
  });

  it('a log call repeating a bound key: one key, the logged value; other bindings and the message kept', () => {
    const { lines, logger } = capture();
    const child = logger.child({ venue: 'kalshi', run_id: 'r1' });
    child.warn({ venue: 'kalshi', err: 'HTTP 500' }, 'venue sync failed');
    child.warn({ venue: 'manifold' }, 'value %s', 'formatted');
    child.info({ service: 'other' }, 'base key');
    for (const l of lines) expect(repeatedKeys(l), l).toEqual([]);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, venue: 'kalshi', run_id: 'r1', err: 'HTTP 500', msg: 'venue sync failed' });
    expect(JSON.parse(lines[1]!)).toMatchObject({ venue: 'manifold', msg: 'value formatted' });
    expect(JSON.parse(lines[2]!)).toMatchObject({ service: 'other' });
    // The logger itself keeps its bindings for the next line.
    child.info('after');
    expect(JSON.parse(lines[3]!)).toMatchObject({ venue: 'kalshi', run_id: 'r1' });
  });

  it('errors are still serialized as `err`, and a key moved into a binding is still redacted', () => {
    const { lines, logger } = capture();
    const child = logger.child({ apiKey: 'qrm_first' });
    child.error(new Error('boom'), 'failed');
    child.info({ apiKey: 'qrm_second', x: 1 }, 'again');
    for (const l of lines) {
      expect(repeatedKeys(l), l).toEqual([]);
      expect(l).not.toContain('qrm_');
    }
    expect(JSON.parse(lines[0]!)).toMatchObject({ err: { message: 'boom' }, apiKey: '[redacted]' });
    expect(JSON.parse(lines[1]!)).toMatchObject({ apiKey: '[redacted]', x: 1 });
  });
});
