import { describe, expect, it } from 'vitest';
import { argumentsWithoutKeys, stringsOf } from '../../src/internal/arguments-without-keys.js';

// A tool call's arguments with known keys hidden before a tool sees them (docs/keys.md).
const KEY = 'sk-or-v1-0123456789abcdef0123';
describe('argumentsWithoutKeys', () => {
  it('hides a key in JSON values and names, and leaves arguments without one as they came', () => {
    expect(argumentsWithoutKeys(JSON.stringify({ a: `x ${KEY}`, b: [1, { [KEY]: true }] }), [KEY])).toBe('{"a":"x ****","b":[1,{"****":true}]}');
    expect(argumentsWithoutKeys('{ "a" : "plain" }', [KEY])).toBeUndefined();
    expect(argumentsWithoutKeys(`{"a":"${KEY}"}`, [])).toBeUndefined();
  });

  it('finds a key holding " or \\ as it is, though JSON escapes it; in text that is not JSON too', () => {
    const odd = 'key"with\\odd/chars';
    expect(argumentsWithoutKeys(JSON.stringify({ a: odd }), [odd])).toBe('{"a":"****"}');
    expect(argumentsWithoutKeys(`{"a": ${JSON.stringify(odd)}`, [odd])).toBe('{"a": "****"');
    expect(argumentsWithoutKeys(`not json ${KEY}`, [KEY])).toBe('not json ****');
  });

  it('keys under 8 characters are not hidden', () => {
    expect(argumentsWithoutKeys('{"a":"test"}', ['test'])).toBeUndefined();
  });

  it('stringsOf gives the strings of the arguments, unescaped', () => {
    expect(stringsOf('{"k\\"1":["a\\\\b",2]}')).toBe('k"1\na\\b');
    expect(stringsOf('not json')).toBe('not json');
  });
});
