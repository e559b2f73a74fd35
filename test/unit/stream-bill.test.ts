import { describe, expect, it } from 'vitest';
import { planChat } from '../../src/emulator/resources/chat.js';
import { chatEventTokens } from '../../src/emulator/resources/stream-bill.js';
import { richDeltas } from '../../src/emulator/models/rich-chat.js';
import { RelayedTokens } from '../../src/emulator/routing/hang-up.js';

// What a hang-up owes counts the content of each event written; every event of a rich answer
// together counts what the whole answer is billed for (reasoning, text, tool arguments, images).
describe('the content a fake chat stream counts as written', () => {
  const tool = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } } } } };
  it.each([
    ['an image', { model: 'local/painter', messages: [{ role: 'user', content: 'a red boat at dawn' }] }],
    ['reasoning', { model: 'local/thinker', messages: [{ role: 'user', content: 'why is the sky blue, in short?' }] }],
    ['tool calls', { model: 'local/tools', tools: [tool, { ...tool, function: { ...tool.function, name: 'other' } }], messages: [{ role: 'user', content: 'lookup and other: the weather in Oslo' }] }],
    ['citations', { model: 'local/echo', plugins: [{ id: 'web' }], messages: [{ role: 'user', content: 'tell me about otters' }] }],
  ])('%s: all its events count the answer’s completion tokens', (_kind, body) => {
    const plan = planChat(body);
    expect(plan.rich).toBeDefined();
    const tokens = new RelayedTokens();
    for (const delta of richDeltas(plan.rich!)) chatEventTokens({ choices: [{ index: 0, delta }] }, tokens);
    tokens.written();
    expect(plan.gen.completionTokens).toBeGreaterThan(0);
    expect(tokens.sent).toBe(plan.gen.completionTokens);
  });
});
