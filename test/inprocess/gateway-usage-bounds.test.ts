import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StateStore } from '../../src/emulator/state/store.js';
import { gatewayForAll } from '../support/gateway-for-all.js';
import { promptCount } from '../../src/emulator/routing/hang-up.js';
import { round } from '../../src/emulator/models/models.js';

// An upstream's usage is not to be trusted: negative token counts must not make an answer free, and
// counts so large that their cost is not a finite number must neither reach the balance (NaN or
// Infinity there lets every later hold through, and state.json writes them as null, so the next
// start refuses its own state) nor be sent as an answer nobody paid for.
const PRICE = 0.001;

const gw = gatewayForAll({
  prefix: 'router-usage-bounds-',
  upstreams: { up: (_req, res, body) => {
    const usage = (body.messages as { content: string }[])[0]!.content;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"id":"gen-u","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":${usage}}`);
  } },
  providers: ({ up }) => `providers:\n  - { name: up, base_url: "${up}", models: { test/m: m }, prices: { test/m: { prompt: ${PRICE}, completion: ${PRICE} } } }\n`,
});

const ask = (usage: string) =>
  fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', messages: [{ role: 'user', content: usage }] }) });
const usage = () => gw.gateway.store.workspace('default').total_usage;

describe('an upstream usage out of bounds', () => {
  it('a negative token count says nothing of its side: the tokens that are there are charged, the prompt counted', async () => {
    const before = usage();
    const said = '{"prompt_tokens":-1000000,"completion_tokens":10,"total_tokens":-999990}';
    const res = await ask(said);
    expect(res.status).toBe(200);
    // The prompt as the fake models count one (a hang-up's), not the upstream's nonsense nor nothing (which it was).
    const prompt = promptCount({ messages: [{ role: 'user', content: said }] });
    expect(prompt).toBeGreaterThan(0);
    const cost = round(round(prompt * PRICE) + round(10 * PRICE));
    expect(((await res.json()) as any).usage).toMatchObject({ prompt_tokens: prompt, completion_tokens: 10, cost });
    // Before: 10 tokens less a million cost less than nothing, and the answer was free.
    expect(usage()).toBeCloseTo(before + cost, 10);
  });

  it('counts whose cost is not finite: refused, nothing charged, the balance and the saved state still numbers', async () => {
    const before = usage();
    const res = await ask('{"prompt_tokens":1,"completion_tokens":1e309,"total_tokens":1e309}');
    expect(res.status).toBe(502);
    expect(((await res.json()) as any).error.message).toMatch(/usage/);
    expect(usage()).toBe(before);
    expect(Number.isFinite(gw.gateway.store.balance('default'))).toBe(true);
    await gw.gateway.store.idle();
    gw.gateway.store.close();
    // The state it saved is read again (before: total_usage null, "not a workspace record").
    expect(new StateStore(join(gw.dir, 'gateway')).workspace('default').total_usage).toBe(before);
  });
});
