import { expect, it } from 'vitest';
import { round } from '../../src/emulator/models/models.js';
import { gatewayForAll } from '../support/gateway-for-all.js';

// An upstream whose answer says no usage the gateway can price (none at all, as servers that ignore
// `stream_options.include_usage` send; negative counts; counts as text or null) is charged its prompt and
// the tokens relayed, counted as a hang-up's are, and the caller gets that usage. Before: charged 0, the
// answer given away, said nowhere (a stream ended with no usage chunk at all).
const PROMPT_PRICE = 1e-6;
const COMPLETION_PRICE = 1e-4;
const SENT = 5;
// "user: hi" is 3 tokens, as the fake models count a prompt; each "wordN " one.
const OWED = round(round(3 * PROMPT_PRICE) + round(SENT * COMPLETION_PRICE));
const USAGES: Record<string, unknown> = {
  none: undefined,
  negative: { prompt_tokens: -100, completion_tokens: -50, total_tokens: -150 },
  text: { prompt_tokens: '100', completion_tokens: null, total_tokens: 'x' },
};

const gw = gatewayForAll({
  prefix: 'router-usage-unusable-',
  upstreams: { up: (req, res, body) => {
    const usage = USAGES[String(body.model)];
    const words = Array.from({ length: SENT }, (_, i) => `word${i} `);
    if (req.url!.endsWith('/responses')) {
      const response = { id: 'resp_u', object: 'response', model: 'm', status: 'completed', output: [{ type: 'message', id: 'msg_u', role: 'assistant', content: [{ type: 'output_text', text: words.join('') }] }], ...(usage ? { usage } : {}) };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(response));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (e: Record<string, unknown>) => res.write(`event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`);
      event({ type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress', output: [], usage: undefined } });
      words.forEach((delta, i) => event({ type: 'response.output_text.delta', sequence_number: i + 1, item_id: 'msg_u', output_index: 0, content_index: 0, delta }));
      event({ type: 'response.completed', sequence_number: SENT + 1, response });
      return res.end();
    }
    const base = { id: 'gen-u', created: 1, model: 'm' };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: words.join('') }, finish_reason: 'stop' }], ...(usage ? { usage } : {}) }));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    chunk({ role: 'assistant' });
    for (const w of words) chunk({ content: w });
    chunk({}, 'stop');
    if (usage) res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  } },
  providers: ({ up }) => {
    const prices = `{ prompt: ${PROMPT_PRICE}, completion: ${COMPLETION_PRICE} }`;
    const names = Object.keys(USAGES);
    return `providers:\n  - { name: up, responses: true, base_url: "${up}", models: { ${names.map((n) => `t/${n}: ${n}`).join(', ')} }, prices: { ${names.map((n) => `t/${n}: ${prices}`).join(', ')} } }\n`;
  },
});

const cases = Object.keys(USAGES).flatMap((usage) => ['chat', 'responses'].flatMap((route) => [false, true].map((stream) => [usage, route, stream] as const)));

it.each(cases)('usage %s, %s, stream %s: charged the prompt and the tokens relayed, the usage said to the caller', async (usage, route, stream) => {
  const { apiKey } = gw.gateway.store.firstKeys();
  const workspace = gw.gateway.store.findKey(apiKey)!.workspace;
  const before = gw.gateway.store.balance(workspace);
  const body = route === 'chat' ? { model: `t/${usage}`, stream, messages: [{ role: 'user', content: 'hi' }] } : { model: `t/${usage}`, stream, input: [{ role: 'user', content: 'hi' }] };
  const res = await fetch(`${gw.gateway.apiRoot}/v1/${route === 'chat' ? 'chat/completions' : 'responses'}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(round(before - gw.gateway.store.balance(workspace))).toBe(OWED);
  // The usage the caller sees is the one charged (a stream's: its own chunk, or the final event's response).
  const said = stream
    ? text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as Record<string, any>).map((e) => e.usage ?? e.response?.usage).filter(Boolean)
    : [(JSON.parse(text) as { usage: unknown }).usage];
  expect(said).toHaveLength(1);
  const [prompt, completion] = route === 'chat' ? ['prompt_tokens', 'completion_tokens'] : ['input_tokens', 'output_tokens'];
  expect(said[0]).toMatchObject({ [prompt]: 3, [completion]: SENT, total_tokens: 3 + SENT, cost: OWED });
  const id = stream ? (route === 'chat' ? JSON.parse(text.split('\n').find((l) => l.startsWith('data: {'))!.slice(6)).id : /"id":"(gen-[^"]+)"/.exec(text)![1]) : JSON.parse(text).id;
  const g = await fetch(`${gw.gateway.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(((await g.json()) as { data: { total_cost: number } }).data.total_cost).toBe(OWED);
});
