import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pricedGateway, withoutGatewayIds } from '../support/upstreams.js';

// The bytes a streamed answer reaches the caller in, through the gateway, against those the build
// before plain chunks were framed from their network reads' bytes (relay's takeBytes) gave for the
// same upstream bytes: test/corpus/stream-bytes.json (its gateway ids as gen-ID). Each case is one
// upstream stream, written in the pieces given (a piece a write, a turn of the event loop between):
// usage priced, an error mid-stream, multi-byte characters and events split across reads, many
// events in one read, \r\n line ends, escapes, a byte that is no UTF-8, chunks of other shapes. The two
// streams with no usage end with the gateway's own usage chunk (what it counted and charged) since m14.
// The cases of parsed chunks (the first, the finish, usage) are those of the build before they were framed
// from their text (relay's frameJsonTo), in JSON forms stringify writes otherwise and without some members.
// STREAM_BYTES_WRITE=1 writes the file anew from the build under test.

const GOLDEN = join(__dirname, '..', 'corpus', 'stream-bytes.json');
const WORDS = ['Garden', ' open', ' summer', ' caf\u00e9', ' \u4e2d\u6587', ' \ud83d\ude00', '.', ' Rapid', ' "quoted"', ' back\\slash', ' line\nend', ' tab\t', ' planet', '.'];

const head = (extra = '') => `{"id":"gen-up-1","object":"chat.completion.chunk","created":1700000000,"model":"m","provider":"up"${extra},"choices":`;
const token = (w: string, extra = '') => `${head(extra)}[{"index":0,"delta":{"role":"assistant","content":${JSON.stringify(w)}},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}`;
const finish = `${head()}[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"stop","logprobs":null}]}`;
const usage = `${head()}[],"usage":{"prompt_tokens":5,"completion_tokens":14,"total_tokens":19,"cost":0.0000355,"is_byok":false}}`;
const events = (list: string[]) => list.map((e) => `data: ${e}\n\n`).join('');
const plain = [...WORDS.map((w) => token(w)), finish, usage, '[DONE]'];

/** Bytes in pieces of the given sizes, over and over. */
const pieces = (bytes: Buffer, sizes: number[]): Buffer[] => {
  const out: Buffer[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    out.push(bytes.subarray(at, at + sizes[i % sizes.length]!));
    at += sizes[i % sizes.length]!;
  }
  return out;
};
/** A token event whose `~` is the bytes ff c3: no character (the second one's end cut by the next byte). */
const noUtf8 = (w: string) => {
  const bytes = Buffer.from(`data: ${token(w)}\n\n`);
  const at = bytes.indexOf('~');
  return Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff, 0xc3]), bytes.subarray(at + 1)]);
};
const perEvent = (list: string[]) => list.map((e) => Buffer.from(`data: ${e}\n\n`));

const CASES: Record<string, () => Buffer[]> = {
  'an event a read, usage priced': () => [Buffer.from(': ROUTER PROCESSING\n\n'), ...perEvent(plain)],
  'all in one read': () => [Buffer.from(events(plain))],
  'a byte a read': () => pieces(Buffer.from(events(plain)), [1]),
  'reads across events and characters': () => pieces(Buffer.from(events(plain)), [7, 131, 2, 300, 45, 5, 613]),
  'crlf line ends': () => pieces(Buffer.from(events(plain).replace(/\n/g, '\r\n')), [97, 13, 250]),
  'an error mid-stream': () => perEvent([token('one'), token(' two'), token(' three'), `{"error":{"code":500,"message":"upstream fell over"}}`, token(' never'), '[DONE]']),
  'bytes that are no UTF-8': () => [...perEvent([token('one'), token(' two')]), noUtf8(' bad~'), noUtf8(' b~ad'), ...perEvent([token(' after'), finish, '[DONE]'])],
  'other shapes between plain chunks': () =>
    perEvent([
      token('one'),
      token(' two'),
      token(' three', ',"system_fingerprint":"fp"'),
      `${head()}[{"index":0,"delta":{"role":"assistant","reasoning":"thinking"},"finish_reason":null}]}`,
      `${head()}[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"t1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}`,
      token(' four'),
      `{"object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"content":" five"},"finish_reason":null}]}`,
      token(' six'),
      finish,
      usage,
      '[DONE]',
    ]),
  // The chunks the relay parses (the first, the finish, usage; others below) in JSON that stringify writes otherwise.
  'parsed chunks in other JSON forms': () =>
    perEvent([
      `{ "id": "gen-up-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "caf\\u00e9 \\/"}, "finish_reason": null}] }`,
      token(' two'),
      `${head()}[{"index":0,"delta":{"role":"assistant","reasoning_content":"hm \\u00e9"},"finish_reason":null}]}`,
      token(' three'),
      `${head(',"model":"m2"')}[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"choices":[{"index":0,"delta":{"content":""},"finish_reason":"length"}]}`,
      `{"object":"chat.completion.chunk","created":1700000000,"1":2,"choices":[],"usage":{"prompt_tokens":5.0,"completion_tokens":3,"total_tokens":8,"cost":1e-7,"other":0.0000001,"big":12345678901234567890,"is_byok":false}}`,
      '[DONE]',
    ]),
  'parsed chunks without a provider or an id': () =>
    perEvent([
      `{"object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"one"},"finish_reason":null}]}`,
      `{"object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"content":" two"},"finish_reason":null}]}`,
      `{"object":"chat.completion.chunk","created":1700000000,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
      `{"id":"gen-up-1","object":"chat.completion.chunk","created":1700000000,"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"cost":0.0000355,"is_byok":false,"prompt_tokens_details":{"cached_tokens":0},"cost_details":{"upstream_inference_cost":null}}}`,
      '[DONE]',
    ]),
  'comments and a data field in two lines': () => [Buffer.from(`data: ${token('one')}\n\n: keep-alive\n\n`), ...perEvent([token(' two')]), Buffer.from(`: ping\n\ndata: ${token(' three').slice(0, 40)}\ndata: ${token(' three').slice(40)}\n\n`), ...perEvent([token(' four'), finish, '[DONE]'])],
};

let gw: Awaited<ReturnType<typeof pricedGateway>>;
beforeAll(async () => {
  gw = await pricedGateway((_req, res: ServerResponse, body) => {
    const name = String((body.messages as { content: string }[])[0]!.content);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const writes = CASES[name]!();
    const next = (i: number) => {
      if (i === writes.length) return res.end();
      res.write(writes[i]);
      setImmediate(() => next(i + 1));
    };
    next(0);
  }, 0.000001);
});
afterAll(() => gw?.close());

it('writes each streamed answer in the same bytes as the build before', async () => {
  const key = gw.gateway.store.firstKeys().apiKey;
  const got: Record<string, string> = {};
  for (const name of Object.keys(CASES)) {
    const res = await gw.call('POST', '/v1/chat/completions', key, { model: 'test/m', stream: true, messages: [{ role: 'user', content: name }] });
    got[name] = withoutGatewayIds(Buffer.from(await res.arrayBuffer()).toString('latin1'));
  }
  if (process.env.STREAM_BYTES_WRITE) writeFileSync(GOLDEN, `${JSON.stringify(got, null, 1)}\n`);
  const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, string>;
  for (const name of Object.keys(CASES)) expect(got[name], name).toBe(golden[name]);
});
