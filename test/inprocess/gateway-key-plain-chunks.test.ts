import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { gatewayForAll } from '../support/gateway-for-all.js';

// A chunk the relay frames from its bytes (a plain one: content, no end, no usage) must carry no other
// text the stream scrub did not see (text-scrub.ts): another choice's content, reasoning or a refusal beside
// the content, however the upstream spaces or escapes its members' names. Each splits a provider key
// between two such chunks; the caller (the openai SDK) must never join it whole.
const KEY = 'sk-or-v1-0123456789abcdef0123456789abcdef';
const MASK = '[provider key]';

type Body = Record<string, unknown>;
const chunk = (choices: Body[]) => `data: ${JSON.stringify({ id: 'gen-hostile', object: 'chat.completion.chunk', created: 1, model: 'm', choices })}\n\n`;
const delta = (d: Body, index = 0, finish: string | null = null) => ({ index, delta: d, finish_reason: finish });
const first = chunk([delta({ role: 'assistant', content: 'A: ' }, 0), delta({ role: 'assistant', content: 'B: ' }, 1)]);
const last = chunk([delta({}, 0, 'stop'), delta({}, 1, 'stop')]);

/** Each case: the upstream's events, and the texts the caller joins (choice.text). */
const CASES: Record<string, { events: string[]; said: Record<string, string> }> = {
  'two choices in each chunk, the second splitting the key': {
    events: [first, chunk([delta({ content: 'one' }, 0), delta({ content: KEY.slice(0, 20) }, 1)]), chunk([delta({ content: 'two' }, 0), delta({ content: KEY.slice(20) }, 1)]), last],
    said: { '0.content': 'A: onetwo', '1.content': `B: ${MASK}` },
  },
  'reasoning beside content': {
    events: [first, chunk([delta({ content: 'three', reasoning: KEY.slice(0, 15) })]), chunk([delta({ content: 'four', reasoning: KEY.slice(15) })]), last],
    said: { '0.content': 'A: threefour', '1.content': 'B: ', '0.reasoning': MASK },
  },
  'a refusal beside content, its name spaced and escaped': {
    events: [first, chunk([delta({ content: 'five', refusal: KEY.slice(0, 12) })]).replace('"refusal":', '"refusal" : '), chunk([delta({ content: 'six', refusal: KEY.slice(12) })]).replace('"refusal"', '"\\u0072efusal"'), last],
    said: { '0.content': 'A: fivesix', '1.content': 'B: ', '0.refusal': MASK },
  },
};

let next: string[] = [];

/** Writes each event on its own, the next once the last went out (separate network reads, as a model's tokens come). */
async function stream(res: ServerResponse, events: string[]): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const text of [...events, 'data: [DONE]\n\n']) {
    await new Promise<void>((resolve) => res.write(text, () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  res.end();
}

const gw = gatewayForAll({
  prefix: 'router-key-plain-',
  upstreams: { up: (_req, res) => void stream(res, next) },
  providers: ({ up }) => `providers:\n  - { name: up, base_url: "${up}", api_key_env: UP_KEY, models: { test/m: m } }\n`,
  env: { UP_KEY: KEY },
});

describe('a provider key split between plain chunks beside their content', () => {
  it.each(Object.keys(CASES))('%s: never joined whole at the caller', async (name) => {
    next = CASES[name]!.events;
    const client = new OpenAI({ apiKey: gw.gateway.store.firstKeys().apiKey, baseURL: `${gw.gateway.apiRoot}/v1`, maxRetries: 0, timeout: 20_000 });
    const texts: Record<string, string> = {};
    for await (const part of await client.chat.completions.create({ model: 'test/m', stream: true, messages: [{ role: 'user', content: 'say it' }] })) {
      for (const choice of part.choices) {
        for (const field of ['content', 'reasoning', 'refusal']) {
          const text = (choice.delta as Body)[field];
          if (typeof text === 'string') texts[`${choice.index}.${field}`] = (texts[`${choice.index}.${field}`] ?? '') + text;
        }
      }
    }
    expect(texts).toEqual(CASES[name]!.said);
  });
});
