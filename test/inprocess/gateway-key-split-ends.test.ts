import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { gatewayForAll } from '../support/gateway-for-all.js';

// Which ends of a stream's text the gateway holds back for a provider key split between two events
// (text-scrub.ts): only those reaching past the key's kind (`sk-or-v1-`, which every such key starts
// with), so that ordinary text ending in "s", "k" or "-" goes out at once, as its bytes came; a key split
// anywhere is still never joined whole at the caller, in content, reasoning, tool arguments or a
// Responses stream. The gateway is `router serve --providers` over real HTTP, the caller the openai SDK.
const KEY = 'sk-or-v1-0123456789abcdef0123456789abcdef';
const KIND = 'sk-or-v1-';
const MASK = '[provider key]';
/** `Bearer KEY` in base64, and how many of its first characters `Bearer ` and the key's kind alone make. */
const BEARER = Buffer.from(`Bearer ${KEY}`).toString('base64');
const RUN_OPEN = Math.floor((Buffer.byteLength(`Bearer ${KIND}`) * 8) / 6);

type Body = Record<string, unknown>;
const chunk = (choices: Body[]) => `data: ${JSON.stringify({ id: 'gen-hostile', object: 'chat.completion.chunk', created: 1, model: 'm', choices })}\n\n`;
const delta = (d: Body, index = 0, finish: string | null = null) => ({ index, delta: d, finish_reason: finish });
const event = (x: Body) => `event: ${String(x.type)}\ndata: ${JSON.stringify(x)}\n\n`;

/** What the upstream says to the next request (set by each case), and a wait before each event after the first. */
let next: { events: string[]; before?: (i: number) => Promise<void> } = { events: [] };

async function stream(res: ServerResponse, events: string[], before?: (i: number) => Promise<void>): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [i, text] of [...events, 'data: [DONE]\n\n'].entries()) {
    if (i && i < events.length) await before?.(i);
    await new Promise<void>((resolve) => res.write(text, () => resolve()));
    if (!before) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  res.end();
}

const gw = gatewayForAll({
  prefix: 'router-key-ends-',
  upstreams: { up: (_req, res) => void stream(res, next.events, next.before) },
  providers: ({ up }) => `providers:\n  - { name: up, responses: true, base_url: "${up}", api_key_env: UP_KEY, models: { test/m: m } }\n`,
  env: { UP_KEY: KEY },
});

const client = () => new OpenAI({ apiKey: gw.gateway.store.firstKeys().apiKey, baseURL: `${gw.gateway.apiRoot}/v1`, maxRetries: 0, timeout: 20_000 });

/** A chat stream's texts as the SDK's caller joins them: content, reasoning and the first tool call's arguments, per choice. */
async function chatTexts(events: string[]): Promise<Record<string, string>> {
  next = { events };
  const texts: Record<string, string> = {};
  const add = (name: string, text: unknown) => typeof text === 'string' && (texts[name] = (texts[name] ?? '') + text);
  for await (const part of await client().chat.completions.create({ model: 'test/m', stream: true, messages: [{ role: 'user', content: 'say it' }] })) {
    for (const choice of part.choices) {
      const d = choice.delta as Body & { tool_calls?: { function?: { arguments?: string } }[] };
      add(`${choice.index}.content`, d.content);
      add(`${choice.index}.reasoning`, d.reasoning);
      add(`${choice.index}.tool`, d.tool_calls?.[0]?.function?.arguments);
    }
  }
  return texts;
}

/** What the caller reads of `a KEY b` split after `at` characters: the key's kind sent before its rest came stays before the mask. */
const said = (at: number) => `a ${at <= KIND.length ? KEY.slice(0, at) : ''}${MASK} b`;

describe('a provider key split at every position of it', () => {
  const positions = Array.from({ length: KEY.length - 1 }, (_, i) => i + 1);

  it('content, reasoning and tool arguments: never whole, only its kind shown', async () => {
    for (const at of positions) {
      const [first, rest] = [`a ${KEY.slice(0, at)}`, `${KEY.slice(at)} b`];
      const texts = await chatTexts([
        chunk([delta({ role: 'assistant', content: 'x' })]),
        chunk([delta({ reasoning: first })]),
        chunk([delta({ reasoning: rest })]),
        chunk([delta({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: first } }] })]),
        chunk([delta({ tool_calls: [{ index: 0, function: { arguments: rest } }] })]),
        chunk([delta({ content: first })]),
        chunk([delta({ content: rest })]),
        chunk([delta({}, 0, 'stop')]),
      ]);
      expect({ at, ...texts }).toEqual({ at, '0.content': `x${said(at)}`, '0.reasoning': said(at), '0.tool': said(at) });
    }
  });

  it('a Responses stream: the deltas joined never hold it', async () => {
    for (const at of positions) {
      const deltas = [`a ${KEY.slice(0, at)}`, `${KEY.slice(at)} b`];
      next = {
        events: [
          event({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', object: 'response', model: 'm', status: 'in_progress', output: [] } }),
          ...deltas.map((d, i) => event({ type: 'response.output_text.delta', sequence_number: i + 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: d })),
          event({ type: 'response.completed', sequence_number: 3, response: { id: 'resp_1', object: 'response', model: 'm', status: 'completed', output: [], usage: { input_tokens: 2, output_tokens: 4, total_tokens: 6 } } }),
        ],
      };
      let joined = '';
      for await (const e of await client().responses.create({ model: 'test/m', input: 'your key?', stream: true })) if (e.type === 'response.output_text.delta') joined += e.delta;
      expect({ at, joined }).toEqual({ at, joined: said(at) });
    }
  });

  it('base64 of `Bearer KEY`: only the characters of its kind\'s bits shown before the mask', async () => {
    for (let at = 1; at < BEARER.length; at++) {
      const { '0.content': text } = await chatTexts([chunk([delta({ role: 'assistant', content: BEARER.slice(0, at) })]), chunk([delta({ content: BEARER.slice(at) }, 0, 'stop')])]);
      expect({ at, shown: text!.includes(MASK) && !text!.includes(BEARER.slice(RUN_OPEN, RUN_OPEN + 8)) }).toEqual({ at, shown: true });
      expect(text!.indexOf(MASK)).toBeLessThanOrEqual(RUN_OPEN);
    }
  });
});

describe('ordinary text that ends with a key\'s first characters', () => {
  // Deltas ending in the key's first characters, and in those of its base64 forms (`c`, `Q`): none is held.
  const DELTAS = ['Hi', ' it works', ' as a black-', 'sk', ' risk', ' ask-', ' sk-', 'or', '-v1', ' and\\/or tasks', ' mosaic', ' QA', ' dones'];

  it('each event reaches the caller before the upstream sends the next, its content as its bytes came', async () => {
    const got: string[] = [];
    let reached: (() => void) | undefined;
    const events = DELTAS.map((d, i) => chunk([delta(i ? { content: 'DELTA' } : { role: 'assistant', content: 'DELTA' })]).replace('DELTA', d));
    // The upstream writes each event only once the caller has read the one before it.
    next = { events, before: (i) => (got.length >= i ? Promise.resolve() : new Promise<void>((resolve) => (reached = resolve))) };
    const res = await client().chat.completions.create({ model: 'test/m', stream: true, messages: [{ role: 'user', content: 'talk' }] }).asResponse();
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        // Each content string as the caller's bytes have it (`\/` unparsed: the chunk was not framed anew).
        const content = /"content":"((?:[^"\\]|\\.)*)"/.exec(frame)?.[1];
        if (content === undefined || got.length >= DELTAS.length) continue;
        got.push(content);
        reached?.();
      }
    }
    expect(got).toEqual(DELTAS);
  });
});
