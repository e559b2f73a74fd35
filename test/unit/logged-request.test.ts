import { describe, expect, it } from 'vitest';
import { LOG_BODY_BYTES, LoggedRequest } from '../../src/emulator/http/logged-request.js';

describe('an entry of the request log', () => {
  it('shows the headers less Authorization, the body parsed from its text once, and its JSON as before', () => {
    const meter = { bytes: 0, entries: 0 };
    const headers = { authorization: 'Bearer secret', 'content-type': 'application/json', 'set-cookie': ['a', 'b'] };
    const entry = new LoggedRequest('POST', '/v1/chat/completions', undefined, headers, 1_700_000_000_000, meter);
    entry.workspace = 'default';
    const text = JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] });
    entry.keepBody({ text }, Buffer.byteLength(text));
    expect(entry.headers).toEqual({ 'content-type': 'application/json' });
    expect(entry.body).toEqual(JSON.parse(text));
    // The same object on every read: what one reader changes, the next sees (as when the tree was kept).
    expect(entry.body).toBe(entry.body);
    expect(entry.query).toEqual({});
    expect(meter.bytes).toBe(text.length);
    expect(JSON.parse(JSON.stringify(entry))).toEqual({ method: 'POST', path: '/v1/chat/completions', query: {}, headers: { 'content-type': 'application/json' }, body: JSON.parse(text), at: 1_700_000_000_000, workspace: 'default', bodyBytes: text.length });
    expect(JSON.stringify(entry)).not.toContain('secret');
  });

  it('keeps a large body as its size, a parsed one as it is, and counts each body once', () => {
    const meter = { bytes: 0, entries: 0 };
    const entry = new LoggedRequest('POST', '/v1/batches', { a: ['1'] }, {}, 0, meter);
    entry.keepBody({ parsed: { x: 1 } }, 10);
    expect(entry.body).toEqual({ x: 1 });
    entry.keepBody({ text: 'x'.repeat(10) }, LOG_BODY_BYTES + 1);
    expect(entry.body).toEqual({ truncated: true, bytes: LOG_BODY_BYTES + 1 });
    expect(entry.bodyBytes).toBe(LOG_BODY_BYTES);
    expect(meter.bytes).toBe(LOG_BODY_BYTES);
    expect(entry.query).toEqual({ a: ['1'] });
  });

  it('shows every header as it came: values with colons, spaces and nothing, none at all', () => {
    const headers = { host: '127.0.0.1:8080', 'x-empty': '', 'user-agent': 'a b/1.0 (x; y)', 'x-title': 'name: value' };
    expect(new LoggedRequest('GET', '/v1/models', undefined, headers, 0).headers).toEqual(headers);
    expect(new LoggedRequest('GET', '/v1/models', undefined, { authorization: 'Bearer k' }, 0).headers).toEqual({});
    expect(new LoggedRequest('GET', '/v1/models', undefined, {}, 0).headers).toEqual({});
  });
});
