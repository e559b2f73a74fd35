import type { LLMock } from '@copilotkit/aimock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MessageAssembler, RouterClient, type ChatChunk } from '../../src/client/index.js';
import { aimockGateway, startAimock, type AimockGateway } from '../support/aimock.js';
import { SETTLE } from '../support/until.js';

// aimock answers a fixture's reasoning as `reasoning_content` (DeepSeek's name, which vLLM and
// llama.cpp's server use too); the service's answers (api.md) and its clients have `reasoning`.
let mock: LLMock;
let gw: AimockGateway;
let client: RouterClient;

beforeAll(async () => {
  mock = await startAimock((m) => m.onMessage('think', { content: 'It is 4.', reasoning: 'Two plus two is four.' }));
  gw = await aimockGateway(`providers:\n  - { name: aimock, base_url: "${mock.url}/v1", models: { test/chat: gpt-4o } }\n`);
  client = new RouterClient({ apiRoot: gw.gateway.apiRoot, apiKey: gw.key, maxRetries: 0 });
});

afterAll(async () => {
  await client?.close();
  await gw?.close();
  await mock?.stop();
});

const cli = (args: string[]) => gw.cli(args);
const messages = (content: string) => [{ role: 'user' as const, content }];

async function streamed(model: string, content: string) {
  const chunks: ChatChunk[] = [];
  const message = new MessageAssembler();
  for await (const chunk of await client.chat.stream({ model, messages: messages(content) })) {
    chunks.push(chunk);
    message.add(chunk);
  }
  return { chunks, message: message.message() };
}

describe('reasoning aimock sends as reasoning_content (as DeepSeek, vLLM and llama.cpp do)', () => {
  // Before: relayed as reasoning_content, a member the service's answers do not have: our client, the
  // CLI's --show-reasoning and GET /v1/generation/content (which read `reasoning`) had none of it.
  const admin = () => new RouterClient({ apiRoot: gw.gateway.apiRoot, apiKey: gw.gateway.store.firstKeys().managementKey, maxRetries: 0 });
  it('reaches the caller as reasoning, whole and streamed, and is kept with the generation', async () => {
    const whole: any = await client.chat.create({ model: 'test/chat', messages: messages('think') });
    expect(whole.choices[0].message).toMatchObject({ content: 'It is 4.', reasoning: 'Two plus two is four.' });
    expect(whole.choices[0].message.reasoning_content).toBeUndefined();
    const { chunks, message } = await streamed('test/chat', 'think');
    expect([message.content, message.reasoning]).toEqual(['It is 4.', 'Two plus two is four.']);
    expect(chunks.some((c: any) => c.choices[0]?.delta?.reasoning_content !== undefined)).toBe(false);
    const management = admin();
    try {
      for (const id of [whole.id, chunks[0]!.id]) {
        const kept = await vi.waitFor(() => management.generations.content(id), SETTLE);
        expect(kept.output).toEqual({ completion: 'It is 4.', reasoning: 'Two plus two is four.' });
      }
    } finally {
      await management.close();
    }
  });

  it('router chat --show-reasoning prints it on stderr, the answer on stdout', async () => {
    for (const how of ['--stream', '--no-stream']) {
      const res = await cli(['chat', '-m', 'test/chat', how, '--show-reasoning', 'think']);
      expect([res.code, res.stdout]).toEqual([0, 'It is 4.\n']);
      expect(res.stderr).toContain('Two plus two is four.');
    }
  });
});
