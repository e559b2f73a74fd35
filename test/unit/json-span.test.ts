import { describe, expect, it } from 'vitest';
import { topLevelSpan } from '../../src/internal/json-span.js';
import { taggedRequest, untaggedResult } from '../../src/batch/job/shard-io.js';

const span = (text: string, key: string) => {
  const b = Buffer.from(text);
  const s = topLevelSpan(b, key);
  return s && b.toString('utf8', ...s);
};

describe('topLevelSpan', () => {
  it('finds a top-level value whatever the order, spacing, strings and nesting around it', () => {
    expect(span('{"custom_id":"a","body":{"x":1}}', 'body')).toBe('{"x":1}');
    expect(span(' { "body" : [ {"custom_id":"no"}, "]}" ] , "custom_id" : "a\\"b" } ', 'custom_id')).toBe('"a\\"b"');
    expect(span('{"body":{"s":"{[\\\\"},"custom_id":"é"}', 'custom_id')).toBe('"é"');
    expect(span('{"n":-1.5e3,"b":true,"custom_id":null}', 'n')).toBe('-1.5e3');
    expect(span('{"b\\u006fdy":{}}', 'body')).toBe('{}');
    // The last of two, as JSON.parse reads it.
    expect(span('{"custom_id":"a","custom_id":"b"}', 'custom_id')).toBe('"b"');
    expect(span('{"x":{"body":1}}', 'body')).toBeUndefined();
    expect(span('[]', 'body')).toBeUndefined();
  });
});

describe('custom_id tags', () => {
  it('a request goes out as {custom_id: tag + id, body} with its body bytes unchanged; a result comes back with its own id', () => {
    const line = Buffer.from('{"body": {"messages": [{"role": "user", "content": "1E5 \\u00e9"}], "temperature": 1E0}, "method": "POST", "url": "/v1/chat/completions", "custom_id": "q\\u00e91"}');
    const sent = Buffer.concat(taggedRequest(line, 'j0123456789ab.'));
    expect(sent.toString()).toBe('{"custom_id":"j0123456789ab.qé1","body":{"messages": [{"role": "user", "content": "1E5 \\u00e9"}], "temperature": 1E0}}');
    expect(sent.length).toBeLessThanOrEqual(line.length + 14);
    const result = Buffer.from('{"custom_id": "j0123456789ab.qé1", "id": "r", "response": {"body": {"custom_id": "j0123456789ab.qé1"}}}');
    expect(Buffer.concat(untaggedResult(result, 'j0123456789ab.')!.parts).toString()).toBe('{"custom_id": "qé1", "id": "r", "response": {"body": {"custom_id": "j0123456789ab.qé1"}}}');
    expect(untaggedResult(result, 'jffffffffffff.')).toBeUndefined();
    expect(untaggedResult(Buffer.from('{"custom_id":"q1"}'), 'j0123456789ab.')).toBeUndefined();
  });
});
