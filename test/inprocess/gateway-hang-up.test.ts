import { describe, expect, it, vi } from 'vitest';
import { round } from '../../src/emulator/models/models.js';
import { gatewayForAll } from '../support/gateway-for-all.js';
import { SETTLE } from '../support/until.js';

// A caller who hangs up mid-stream pays for what it was sent: the prompt (its text counted as the
// fake models count theirs: "user: part" is 3 tokens) and the content tokens relayed, at the model's prices; before any content, nothing.
const PROMPT_PRICE = 1e-6;
const COMPLETION_PRICE = 1e-4;
const MAX_TOKENS = 100;
const SENT = 5;
const USAGE = { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 };
let asked: () => void = () => {};
const keys = new Map<string, string>();

const chunk = (id: string, delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

// The last user message says what to do: `stall` (no token), `part` (SENT tokens, then nothing), `whole`.
const gw = gatewayForAll({
  prefix: 'router-hang-up-',
  upstreams: { up: (req, res, body) => {
    if (req.url!.endsWith('/responses')) {
      // A Responses stream: created, SENT text deltas, then nothing.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (e: Record<string, unknown>) => res.write(`event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`);
      event({ type: 'response.created', sequence_number: 0, response: { id: 'resp-cut', object: 'response', model: 'm', status: 'in_progress', output: [] } });
      for (let i = 0; i < SENT; i++) event({ type: 'response.output_text.delta', sequence_number: i + 1, item_id: 'msg_x', output_index: 0, content_index: 0, delta: `word${i} ` });
      return;
    }
    const how = String((body.messages as { content: string }[]).at(-1)!.content);
    const id = `gen-${how}-${Math.random().toString(36).slice(2)}`;
    asked();
    if (how === 'stall') return;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk(id, { role: 'assistant' }));
    for (let i = 0; i < SENT; i++) res.write(chunk(id, { content: `word${i} ` }));
    if (how === 'part') return;
    res.write(chunk(id, {}, 'stop'));
    res.end(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: USAGE })}\n\ndata: [DONE]\n\n`);
  } },
  providers: ({ up }) => `providers:\n  - { name: up, base_url: "${up}", models: { test/m: m }, prices: { test/m: { prompt: ${PROMPT_PRICE}, completion: ${COMPLETION_PRICE} } } }\n  - { name: resp, responses: true, base_url: "${up}", models: { test/r: m }, prices: { test/r: { prompt: ${PROMPT_PRICE}, completion: ${COMPLETION_PRICE} } } }\n`,
});

const request = (how: string) => ({ model: 'test/m', stream: true, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: how }] });

/** Streams a chat and hangs up once `events` content events were read (Infinity: reads to the end); the ids seen. */
async function chat(ws: string, how: string, events: number): Promise<string[]> {
  const { apiKey } = gw.gateway.store.createWorkspace(ws, 1);
  keys.set(ws, apiKey);
  const caller = new AbortController();
  const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(request(how)) });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const ids: string[] = [];
  for (;;) {
    const contents = [...text.matchAll(/"content":"word/g)].length;
    if (contents >= events) break;
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  for (const m of text.matchAll(/"id":"(gen-[^"]+)"/g)) ids.push(m[1]!);
  if (events !== Infinity) caller.abort();
  return ids;
}

const generation = async (ws: string, id: string) => {
  const res = await fetch(`${gw.gateway.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${keys.get(ws)!}` } });
  return ((await res.json()) as { data: Record<string, unknown> }).data;
};

describe('a caller who hangs up on a gateway stream', () => {
  it('after content: charged the prompt text and the tokens relayed, capped below the bound; the generation is cancelled', async () => {
    const ids = await chat('cut', 'part', SENT);
    const promptTokens = 3;
    const estimate = Buffer.byteLength(JSON.stringify(request('part'))) + 16;
    const owed = round(round(promptTokens * PROMPT_PRICE) + round(SENT * COMPLETION_PRICE));
    const bound = round(round(estimate * PROMPT_PRICE) + round(MAX_TOKENS * COMPLETION_PRICE));
    // Before: the hold was given back whole, and the caller paid nothing.
    await vi.waitFor(() => expect(gw.gateway.store.balance('cut')).toBeCloseTo(1 - owed, 10), SETTLE);
    expect(owed).toBeGreaterThan(0);
    expect(owed).toBeLessThan(bound);
    await vi.waitFor(async () => {
      const g = await generation('cut', ids[0]!);
      expect(g).toMatchObject({ cancelled: true, tokens_completion: SENT, tokens_prompt: promptTokens, total_cost: owed });
    }, SETTLE);
  });

  it('before the first token: nothing charged', async () => {
    const upstreamAsked = new Promise<void>((resolve) => (asked = resolve));
    const { apiKey } = gw.gateway.store.createWorkspace('early', 1);
    const caller = new AbortController();
    const answer = fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(request('stall')) }).catch(() => undefined);
    await upstreamAsked;
    expect(gw.gateway.store.balance('early')).toBeLessThan(1);
    caller.abort();
    await answer;
    await vi.waitFor(() => expect(gw.gateway.store.balance('early')).toBe(1), SETTLE);
  });

  it('a whole answer: charged its usage, not cancelled', async () => {
    const ids = await chat('whole', 'whole', Infinity);
    const cost = round(round(USAGE.prompt_tokens * PROMPT_PRICE) + round(USAGE.completion_tokens * COMPLETION_PRICE));
    expect(gw.gateway.store.balance('whole')).toBeCloseTo(1 - cost, 10);
    const g = await generation('whole', ids[0]!);
    expect(g).toMatchObject({ cancelled: false, total_cost: cost, finish_reason: 'stop' });
  });

  it('a Responses stream alike: charged the prompt text and the text tokens relayed', async () => {
    const { apiKey } = gw.gateway.store.createWorkspace('resp-cut', 1);
    keys.set('resp-cut', apiKey);
    const body = { model: 'test/r', stream: true, max_output_tokens: MAX_TOKENS, input: 'part' };
    const caller = new AbortController();
    const res = await fetch(`${gw.gateway.apiRoot}/v1/responses`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes(`word${SENT - 1}`)) text += new TextDecoder().decode((await reader.read()).value);
    caller.abort();
    const promptTokens = 3;
    const owed = round(round(promptTokens * PROMPT_PRICE) + round(SENT * COMPLETION_PRICE));
    await vi.waitFor(() => expect(gw.gateway.store.balance('resp-cut')).toBeCloseTo(1 - owed, 10), SETTLE);
    await vi.waitFor(async () => expect(await generation('resp-cut', /"id":"(gen-\d+-[0-9a-f]+)"/.exec(text)![1]!)).toMatchObject({ cancelled: true, tokens_completion: SENT, total_cost: owed }), SETTLE);
  });
});
