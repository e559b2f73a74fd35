import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { post } from '../support/post.js';
import { sseChunk } from '../support/upstreams.js';
import { gatewayForAll } from '../support/gateway-for-all.js';

// Two gateway defects left last stop, each failing on the code before its fix:
// - an upstream's refusal (a 400) sent in gzip, deflate or br, though the gateway asks for none, was
//   passed over as a broken provider (the next one asked, the caller's mistake hidden behind a 502 or
//   another's answer); now decoded and relayed as the caller's 400, as an uncoded one is;
// - a chat chunk with a `type` member of its own was read as a Responses event, so such a provider's
//   role-only first chunk opened the caller's stream: a break after it reached the caller as an error
//   chunk instead of the next provider's answer.
const CODERS: Record<string, (b: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };
const ANSWER = { id: 'gen-ok', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'from ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };
const ask = (model: string, stream: boolean, content = 'hi') => post({ apiRoot: gw.gateway.apiRoot, apiKey: gw.gateway.store.firstKeys().apiKey }, '/v1/chat/completions', { model, stream, messages: [{ role: 'user', content }] }, { 'x-router-metadata': 'enabled' });

const gw = gatewayForAll({
  prefix: 'router-coded-typed-',
  upstreams: {
    // Answers in the coding the message names: a 400 (`refuse`) or a 503 (`busy`).
    coded: (_req, res, body) => {
      const [what, coding] = String((body.messages as { content: string }[])[0]!.content).split(' ');
      const status = what === 'busy' ? 503 : 400;
      res.writeHead(status, { 'content-type': 'application/json', 'content-encoding': coding! });
      res.end(CODERS[coding!]!(Buffer.from(JSON.stringify({ error: { code: status, message: `upstream ${what} in ${coding}` } }))));
    },
    // A role-only chunk carrying a `type`, then the connection dropped once it is out.
    typed: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const role = { id: 'gen-typed', object: 'chat.completion.chunk', type: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }] };
      res.write(`data: ${JSON.stringify(role)}\n\n`, () => res.socket?.destroy());
    },
    ok: (_req, res, body) => {
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.end(`${sseChunk('from ok', 'stop')}data: [DONE]\n\n`);
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ANSWER));
    },
  },
  providers: (urls) => `providers:
  - { name: coded, base_url: "${urls.coded}", models: { t/c: m } }
  - { name: typed, base_url: "${urls.typed}", models: { t/t: m } }
  - { name: ok, base_url: "${urls.ok}", models: { t/c: m, t/t: m } }
`,
  stateName: 'g',
});

describe('an upstream refusal in a content-coding', () => {
  it.each(Object.keys(CODERS).flatMap((coding) => [false, true].map((stream) => [coding, stream] as const)))('%s, stream %s: relayed as the caller’s 400, no other provider asked', async (coding, stream) => {
    const asked = gw.upstream('ok').seen.length;
    const res = await ask('t/c', stream, `refuse ${coding}`);
    // Before: passed over ("an answer in content-encoding …"), the next provider answered 200.
    expect(res.status).toBe(400);
    expect(res.json.error.message).toBe(`coded: upstream refuse in ${coding}`);
    expect(gw.upstream('ok').seen.length).toBe(asked);
  });

  it('a coded 503 is passed over with its words', async () => {
    const res = await ask('t/c', false, 'busy gzip');
    expect(res.status).toBe(200);
    expect(res.json.router_metadata.attempts[0].error).toContain('coded: HTTP 503 {"error":{"code":503,"message":"upstream busy in gzip"}}');
  });
});

describe('a chat chunk with a `type` of its own', () => {
  it('opens nothing while it carries only a role: a break after it falls back to the next provider', async () => {
    const res = await ask('t/t', true);
    expect(res.status).toBe(200);
    // Before: the role chunk opened the stream, and the break ended it with the error chunk.
    expect(res.text).not.toContain('"finish_reason":"error"');
    expect(res.text).toContain('from ok');
    expect(res.text).toContain('"provider":"ok"');
    expect(res.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });
});
