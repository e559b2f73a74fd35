import { describe, expect, it, vi } from 'vitest';
import { gatewayForAll } from '../support/gateway-for-all.js';
import { SETTLE } from '../support/until.js';

// A caller who hangs up on a stream through the gateway after a tool call's arguments (or reasoning)
// were written to it pays for them, as a fake model's caller does (stream-bill.ts counts text,
// reasoning and tool arguments alike). Before: only `content` counted, so a whole tool call, read
// and then hung up on before its end, cost nothing (the hold given back in full).
const PRICE = 1e-3;
let letGo = 0;

const chunk = (delta: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'gen-tool', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
const ARGS = ['{"city": ', '"Paris and its many quarters", ', '"units": "celsius"}'];

const gw = gatewayForAll({
  prefix: 'router-hang-up-tools-',
  upstreams: { up: (req, res, body) => {
    res.on('close', () => letGo++);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.url!.endsWith('/responses')) {
      const event = (e: Record<string, unknown>) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`;
      res.write(event({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', object: 'response', model: 'm', status: 'in_progress', output: [] } }));
      if (body.model === 'speak' || body.model === 'say') {
        // A text answer, with (speak) or without (say) its audio in base64 after it.
        res.write(event({ type: 'response.output_text.delta', sequence_number: 1, output_index: 0, item_id: 'msg_1', delta: 'Sunny in Paris today.' }));
        if (body.model === 'speak') res.write(event({ type: 'response.audio.delta', sequence_number: 2, response_id: 'resp_1', delta: Buffer.alloc(6000, 0xfb).toString('base64') }));
        res.write(event({ type: 'response.output_text.done', sequence_number: 3, output_index: 0, item_id: 'msg_1', text: 'LAST' }));
        return;
      }
      res.write(event({ type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'weather', arguments: '' } }));
      ARGS.forEach((delta, i) => res.write(event({ type: 'response.function_call_arguments.delta', sequence_number: 2 + i, output_index: 0, item_id: 'fc_1', delta })));
      return;
    }
    if (body.model === 'think') {
      res.write(chunk({ role: 'assistant', content: null, reasoning: 'Let me weigh the options' }));
      res.write(chunk({ reasoning: ' for the weather in Paris, done.' }));
      return;
    }
    res.write(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'weather', arguments: '' } }] }));
    for (const piece of ARGS) res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  } },
  providers: ({ up }) => `providers:\n  - { name: up, base_url: "${up}", responses: true, models: { test/m: m, test/think: think, test/speak: speak, test/say: say }, prices: { test/m: { prompt: ${PRICE}, completion: ${PRICE} }, test/think: { prompt: ${PRICE}, completion: ${PRICE} }, test/speak: { prompt: ${PRICE}, completion: ${PRICE} }, test/say: { prompt: ${PRICE}, completion: ${PRICE} } } }\n`,
});

async function hangUpAfter(ws: string, model: string, last: string, path = 'chat/completions'): Promise<number> {
  const { apiKey } = gw.gateway.store.createWorkspace(ws, 1);
  const caller = new AbortController();
  const body = path === 'responses' ? { model, stream: true, max_output_tokens: 100, input: 'weather' } : { model, stream: true, max_tokens: 100, messages: [{ role: 'user', content: 'weather' }] };
  const res = await fetch(`${gw.gateway.apiRoot}/v1/${path}`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes(last)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString('utf8');
  }
  const before = letGo;
  caller.abort();
  await vi.waitFor(() => expect(letGo).toBeGreaterThan(before), SETTLE);
  return 1 - gw.gateway.store.balance(ws);
}

describe('a hang-up after output that is not content', () => {
  it('a whole tool call written: the prompt and its arguments are charged', async () => {
    const charged = await hangUpAfter('tool-cut', 'test/m', 'celsius');
    expect(charged).toBeGreaterThan(0);
    // "user: weather" and the arguments' tokens, as a fake model counts them; at most the bound.
    expect(charged).toBeLessThan(100 * PRICE + 200 * PRICE);
  });

  it('a Responses stream whose function call arguments were written: charged as well', async () => {
    expect(await hangUpAfter('responses-cut', 'test/m', 'celsius', 'responses')).toBeGreaterThan(0);
  });

  it("a Responses stream's audio written: its base64 bytes are no text tokens (charged as the same answer without them)", async () => {
    const withAudio = await hangUpAfter('speak-cut', 'test/speak', 'LAST', 'responses');
    const without = await hangUpAfter('say-cut', 'test/say', 'LAST', 'responses');
    expect(without).toBeGreaterThan(0);
    // Before: its 8,000 base64 characters were counted as text: 0.194 charged, not 0.008.
    expect(withAudio).toBe(without);
  });

  it('reasoning written: charged as well', async () => {
    expect(await hangUpAfter('think-cut', 'test/think', 'done.')).toBeGreaterThan(0);
  });
});
