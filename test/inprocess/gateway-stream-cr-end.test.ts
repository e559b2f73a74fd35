import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localUpstream, sseChunk, testGateway, type LocalUpstream } from '../support/upstreams.js';

// An event stream may end its lines with a lone \r (the SSE rules take CR, LF or CRLF). The gateway's
// splitter kept a \r that ended a piece pending, as maybe half of a \r\n: an upstream whose stream ended
// `data: [DONE]\r\r` and kept its connection open left the caller's stream open until the upstream
// closed it (or timed out), the [DONE] unseen. Now a \r ends its line at once (a \n after it is
// dropped): the stream ends at its end, chat and Responses alike. The upstream here never closes.
// A Responses stream has no [DONE]: the gateway read on past its final event to the upstream's close,
// and one that kept it open got, after idle_timeout_ms, a `response.failed` for a completed answer.
let up: LocalUpstream;
let gw: Awaited<ReturnType<typeof testGateway>>;
const open = new Set<ServerResponse>();
const cr = (events: string) => events.replace(/\n/g, '\r');

const RESPONSE = { id: 'resp_1', object: 'response', created_at: 1, model: 'm', status: 'completed', output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hi', annotations: [] }] }], usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } };
const responsesEvents = [
  `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', response: { ...RESPONSE, status: 'in_progress', output: [] } })}\n\n`,
  `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'hi' })}\n\n`,
  `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: RESPONSE })}\n\n`,
];

beforeAll(async () => {
  up = await localUpstream((req, res, body) => {
    open.add(res);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // Every event in its own write; the last one's \r\r ends the write, and nothing more comes.
    const events = req.url!.endsWith('/responses') ? responsesEvents : [sseChunk(null), sseChunk('hi'), sseChunk('', 'stop'), 'data: {"id":"gen-local","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\n', 'data: [DONE]\n\n'];
    for (const e of events) res.write(body.model === 'cr' ? cr(e) : e);
  });
  gw = await testGateway(`providers:\n  - { name: up, base_url: "${up.baseUrl}", responses: true, timeout_ms: 60000, idle_timeout_ms: 2000, models: { t/cr: cr, t/lf: lf } }\n`, 'cr-end');
});

afterAll(async () => {
  for (const res of open) res.destroy();
  await gw?.close();
  await up?.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${gw.gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gw.gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe.each([
  ['a lone \\r', 't/cr'],
  ['\\n', 't/lf'],
])('an upstream stream whose lines end in %s, kept open after its end', (_ends, model) => {
  it('ends the caller\'s chat stream at its [DONE], whole', async () => {
    const before = open.size;
    const res = await post('/v1/chat/completions', { model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text).toContain('"content":"hi"');
    expect(text).not.toContain('"error"');
    expect(open.size).toBe(before + 1);
  });

  it('ends the caller\'s Responses stream at its final event', async () => {
    const before = open.size;
    const res = await post('/v1/responses', { model, stream: true, input: 'hi' });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.trimEnd().split('\n\n').at(-1)).toMatch(/^event: response.completed\ndata: /);
    expect(open.size).toBe(before + 1);
  });
});
