/**
 * Issue 42: what the deployed service adds, as clients that are not ours use it against the
 * emulator: the official SDK opting in to routing metadata (it sends X-OpenRouter-Metadata and reads
 * `openrouter_metadata` strictly), its generation lookup, and the openai package sending the header
 * itself; and usage in a stream nobody asked usage of (the OpenAPI: include_usage has no effect).
 */
import OpenAI from 'openai';
import type { TestEnv } from '../helpers.js';
import { attemptRow, type Row } from './checks.js';

type RowMaker = (operation: string, check: string) => Row;

const must = (ok: boolean, what: string) => {
  if (!ok) throw new Error(what);
};

export async function metadataChecks(t: TestEnv, row: RowMaker): Promise<void> {
  const { OpenRouter } = await import('@openrouter/sdk');
  const sdk = new OpenRouter({ apiKey: t.apiKey, serverURL: `${t.apiRoot}/v1` });
  const sdkRow = (operation: string, fn: () => Promise<void>) => attemptRow(row(operation, 'official SDK: X-OpenRouter-Metadata, openrouter_metadata'), fn);
  const messages = [{ role: 'user' as const, content: 'hi' }];

  await sdkRow('chat completions', async () => {
    const c = await sdk.chat.send({ xOpenRouterMetadata: 'enabled', chatRequest: { model: 'local/unavailable', models: ['local/echo'], messages } });
    const m = (c as { openrouterMetadata?: { requested?: string; attempt?: number; attempts?: unknown[] } }).openrouterMetadata;
    must(m?.requested === 'local/unavailable' && m.attempt === 2 && m.attempts?.length === 2, `openrouterMetadata ${JSON.stringify(m)}`);
  });
  await sdkRow('chat completions', async () => {
    const s = await sdk.chat.send({ xOpenRouterMetadata: 'enabled', chatRequest: { model: 'local/lorem', stream: true, messages: [{ role: 'user', content: 'write 5 words' }] } });
    let meta = 0;
    let usage = 0;
    for await (const c of s as AsyncIterable<{ openrouterMetadata?: unknown; usage?: unknown }>) {
      if (c.openrouterMetadata) meta++;
      if (c.usage) usage++;
    }
    must(meta === 1 && usage === 1, `${meta} chunks with metadata, ${usage} with usage (streamOptions not given)`);
  });
  await sdkRow('responses', async () => {
    const r = await sdk.responses.send({ xOpenRouterMetadata: 'enabled', responsesRequest: { model: 'local/echo', input: 'hi' } });
    const m = (r as { openrouterMetadata?: { requested?: string } }).openrouterMetadata;
    must(m?.requested === 'local/echo', `openrouterMetadata ${JSON.stringify(m)}`);
  });
  await attemptRow(row('generation', 'official SDK parses the answer'), async () => {
    const c = await sdk.chat.send({ chatRequest: { model: 'local/echo', messages } });
    const g = await sdk.generations.getGeneration({ id: (c as { id: string }).id });
    must(g.data.id === (c as { id: string }).id && g.data.totalCost === (c as { usage?: { cost?: number } }).usage?.cost, `generation ${JSON.stringify(g.data).slice(0, 200)}`);
  });

  const client = new OpenAI({ apiKey: t.apiKey, baseURL: `${t.apiRoot}/v1`, maxRetries: 0 });
  await attemptRow(row('chat completions', 'openai npm: X-OpenRouter-Metadata header'), async () => {
    const c = await client.chat.completions.create({ model: 'local/echo', messages }, { headers: { 'X-OpenRouter-Metadata': 'enabled' } });
    const m = (c as unknown as { openrouter_metadata?: { requested?: string }; router_metadata?: unknown }).openrouter_metadata;
    must(m?.requested === 'local/echo' && !('router_metadata' in c), `openrouter_metadata ${JSON.stringify(m)}`);
  });
  await attemptRow(row('chat completions', 'openai npm: usage in a stream without stream_options'), async () => {
    const stream = await client.chat.completions.create({ model: 'local/lorem', messages: [{ role: 'user', content: 'write 7 words' }], stream: true });
    let usage: OpenAI.CompletionUsage | null | undefined;
    let text = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage ??= chunk.usage;
    }
    must(text.trim().split(/\s+/).length === 7 && !!usage && usage.completion_tokens > 0, `text ${JSON.stringify(text)}, usage ${JSON.stringify(usage)}`);
  });
}
