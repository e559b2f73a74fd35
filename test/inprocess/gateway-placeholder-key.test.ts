import { describe, expect, it } from 'vitest';
import { gatewayForAll } from '../support/gateway-for-all.js';
import { sseChunk } from '../support/upstreams.js';

// A local server that takes any key is given a placeholder (LiteLLM's docs say `anything`, LM Studio's
// `lm-studio`): a word, not a secret. Its answers are the caller's as they came: the word was
// "[provider key]" in every answer that said it. A real key is still hidden (gateway-key-in-answer.test.ts).
const SAID = 'I can do anything, lm-studio or not.';


const gw = gatewayForAll({
  prefix: 'router-placeholder-key-',
  stateName: 'state',
  upstreams: { up: (_req, res, body) => {
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${sseChunk(SAID)}${sseChunk(null, 'stop')}data: [DONE]\n\n`);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: SAID }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } }));
  } },
  providers: ({ up }) => `providers:\n  - { name: litellm, base_url: "${up}", api_key_env: A_KEY, models: { test/a: m } }\n  - { name: lmstudio, base_url: "${up}", api_key_env: L_KEY, models: { test/l: m } }\n`,
  env: { A_KEY: 'anything', L_KEY: 'lm-studio' },
});

const ask = (stream: boolean) =>
  fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/a', stream, messages: [{ role: 'user', content: 'hi' }] }) });

describe('a placeholder key', () => {
  it('is left alone in a whole answer and in a stream', async () => {
    const whole = (await (await ask(false)).json()) as { choices: { message: { content: string } }[] };
    expect(whole.choices[0]!.message.content).toBe(SAID);
    const streamed = await (await ask(true)).text();
    expect(streamed).toContain(JSON.stringify(SAID));
    expect(streamed).not.toContain('[provider key]');
  });
});
