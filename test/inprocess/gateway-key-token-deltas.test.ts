import { describe, expect, it } from 'vitest';
import { ev, hostileGateway } from '../support/hostile-gateway.js';
import { FLAVORS, batchesPathOf } from '../support/batch-jobs.js';

// A model shown the gateway's provider key (from api_key_env) says it back as models stream: one to three characters
// a delta, as a tokenizer cuts it. The key as it is, base64 alone and as `Bearer KEY` base64: in a chat content, in
// two choices or two tool calls' arguments interleaved, from the reasoning on into the content, through /v1/messages,
// in a Responses stream (its deltas, its `.done` event, its final response), and in a batch's results (both
// flavours). What the caller joins of each stream's pieces never holds 8 characters of what only the key makes; a
// failure says how many such pieces got out, never which.
const KEY = 'sk-proj-ab3_Xy9-Qw_0123456789abcdefGHIJKLmnopqrstuvWXYZ';
type Body = Record<string, unknown>;
const base64 = (text: string) => Buffer.from(text).toString('base64');

/** Each form as the model writes it, and the part of it only the key's bits make (its kind and the bytes beside it left out). */
const FORMS: [string, string, string][] = [
  ['the key', KEY, KEY.slice('sk-proj-'.length)],
  ['the key in base64', base64(KEY), base64(KEY).slice(11, 72)],
  ['`Bearer KEY` in base64', base64(`Bearer ${KEY}`), base64(`Bearer ${KEY}`).slice(22, 80)],
];

/** How many 8 characters of `secret` `text` holds. */
const leaked = (text: string, secret: string) => Array.from({ length: secret.length - 7 }, (_, i) => secret.slice(i, i + 8)).filter((piece) => text.includes(piece)).length;

/** `text` cut as a tokenizer streams it: 1, 2, 3 characters, again. */
const tokens = (text: string, from = 1) => {
  const out: string[] = [];
  for (let at = 0, n = from; at < text.length; n++) out.push(text.slice(at, (at += 1 + (n % 3))));
  return out;
};

const chunk = (choices: Body[]) => `data: ${JSON.stringify({ id: 'gen-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices })}\n\n`;
const choice = (delta: Body, index = 0, finish: string | null = null) => ({ index, delta, finish_reason: finish });
const args = (index: number, text: string) => ({ tool_calls: [{ index, function: { arguments: text } }] });
const datas = (text: string) => text.split('\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice(6)) as Body);

/** Each chat stream's text, as the caller joins it: by choice, its content and reasoning, and each tool call's arguments. */
function chatTexts(text: string): string[] {
  const joined = new Map<string, string>();
  const add = (name: string, piece: unknown) => typeof piece === 'string' && joined.set(name, (joined.get(name) ?? '') + piece);
  for (const data of datas(text)) {
    for (const c of (data.choices as Body[] | undefined) ?? []) {
      const delta = (c.delta ?? {}) as Body;
      for (const k of ['content', 'reasoning']) add(`${String(c.index)}.${k}`, delta[k]);
      for (const call of (delta.tool_calls as Body[] | undefined) ?? []) add(`${String(c.index)}.tool.${String(call.index)}`, (call.function as Body | undefined)?.arguments);
    }
  }
  return [...joined.values()];
}

const { willAnswer, raw } = hostileGateway(KEY);
const ask = (path: string, more: Body) => raw('POST', path, { model: 'test/m', messages: [{ role: 'user', content: 'hi' }], ...more });

describe('a key a model streams back 1 to 3 characters a delta', () => {
  for (const [what, said, secret] of FORMS) {
    const told = `Your key is ${said}, keep it.`;
    const count = (texts: string[]) => texts.reduce((n, text) => n + leaked(text, secret), 0);

    it(`chat: ${what} in the content; through /v1/messages too`, async () => {
      const events = [...tokens(told).map((t) => chunk([choice({ content: t })])), chunk([choice({}, 0, 'stop')])];
      willAnswer({ events });
      const got = await ask('/v1/chat/completions', { stream: true });
      expect(chatTexts(got.text).join('').includes('keep it.'), 'the stream relayed').toBe(true);
      expect(count(chatTexts(got.text))).toBe(0);
      willAnswer({ events });
      const messages = await ask('/v1/messages', { max_tokens: 100, stream: true });
      const text = datas(messages.text).map((d) => ((d.delta as Body | undefined)?.text as string | undefined) ?? '').join('');
      expect(text.includes('keep it.'), 'the stream relayed').toBe(true);
      expect(leaked(text, secret)).toBe(0);
    });

    it(`chat: ${what} in two choices, and two tool calls' arguments, interleaved delta by delta`, async () => {
      const [one, two] = [tokens(told), tokens(told, 2)];
      const calls = [0, 1].map((i) => ({ index: i, id: `call_${i}`, type: 'function', function: { name: 'f', arguments: '' } }));
      const events = [chunk([choice({ tool_calls: calls }, 1)])];
      for (let i = 0; i < Math.max(one.length, two.length); i++) {
        if (one[i]) events.push(chunk([choice({ content: one[i] })]), chunk([choice(args(0, one[i]!), 1)]));
        if (two[i]) events.push(chunk([choice({ content: two[i] }, 2)]), chunk([choice(args(1, two[i]!), 1)]));
      }
      willAnswer({ events: [...events, chunk([choice({}, 0, 'stop'), choice({}, 1, 'tool_calls'), choice({}, 2, 'stop')])] });
      const got = await ask('/v1/chat/completions', { stream: true });
      expect(chatTexts(got.text).filter((t) => t.endsWith('keep it.')).length, 'each stream relayed').toBe(4);
      expect(count(chatTexts(got.text))).toBe(0);
    });

    it(`chat: ${what} from the reasoning on into the content`, async () => {
      const cut = told.indexOf(said) + 20;
      const events = [...tokens(told.slice(0, cut)).map((t) => chunk([choice({ reasoning: t })])), ...tokens(told.slice(cut)).map((t) => chunk([choice({ content: t })])), chunk([choice({}, 0, 'stop')])];
      willAnswer({ events });
      const got = await ask('/v1/chat/completions', { stream: true });
      expect(count([chatTexts(got.text).join('')])).toBe(0);
    });

    it(`Responses: ${what} in the deltas, the .done event and the final response`, async () => {
      const part = { item_id: 'm1', output_index: 0, content_index: 0 };
      const deltas = tokens(told).map((delta, n) => ev({ type: 'response.output_text.delta', sequence_number: n + 1, ...part, delta }));
      const output = [{ type: 'message', id: 'm1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: told, annotations: [] }] }];
      const done = ev({ type: 'response.output_text.done', sequence_number: 900, ...part, text: told });
      willAnswer({ events: [...deltas, done, ev({ type: 'response.completed', sequence_number: 901, response: { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output } })] });
      const got = await raw('POST', '/v1/responses', { model: 'test/m', stream: true, input: 'hi' });
      const events = datas(got.text);
      const joined = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta as string).join('');
      expect(joined.includes('keep it.'), 'the deltas relayed').toBe(true);
      expect(leaked(joined, secret)).toBe(0);
      expect(events.some((e) => e.type === 'response.completed'), 'the stream ended').toBe(true);
      expect(leaked(got.text, secret)).toBe(0);
    });
  }
});

for (const flavor of FLAVORS) {
  describe(`a key a model wrote, in a batch's results (${flavor})`, () => {
    const gateway = hostileGateway(KEY, { batchDelayMs: 0, flavor });
    const path = batchesPathOf(flavor);
    for (const [what, said, secret] of FORMS) {
      it(what, async () => {
        const content = `Your key is ${said}, keep it.`;
        gateway.willAnswer({ body: JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }) });
        const text = await gateway.settledBatchText(path);
        expect(text.includes('keep it.'), 'the answer in the results').toBe(true);
        expect(leaked(text, secret)).toBe(0);
      });
    }
  });
}
