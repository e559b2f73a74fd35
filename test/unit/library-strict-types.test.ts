import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';
import { diagnosticLines } from '../support/ts-diagnostics.js';

// A TypeScript program as a newcomer who checks strictly writes it (n12, the 21st newcomer pass): `strict`, and
// the options @tsconfig/strictest adds. Under `exactOptionalPropertyTypes` the first line of every page's program,
// `new RouterClient({ apiKey: process.env.ROUTER_API_KEY, … })`, was an error (a `string | undefined` given to
// `apiKey?: string`), as were the options a program passes on from its own (`signal`, a setting it may not have);
// `err.code` on a `RouterError`, the switch docs/library.md shows, was no property of it; a listed model's
// `pricing`, `context_length` and `top_provider` were `unknown` (each read a cast). Later (l6): an embeddings
// answer's `provider`, `usage.cost_details` and `prompt_tokens_details` were no members, and the calls routed to no
// model took a session and routing metadata they had no use for (batches, credits; decisions' metadata). Checked against the
// package's src, whose declarations the package ships; only the program's own diagnostics count.
const ROOT = resolve(import.meta.dirname, '..', '..');

const PROGRAM = `
import { RouterClient, RouterError, type CallOptions } from './src/client/index.js';
import { chatModel, chatWithTools, ConversationStore, serviceListPrices, SpendGuard, ToolSet, type PromptOptions } from './src/kit/index.js';

export async function main(signal: AbortSignal | undefined, settings: { root?: string; timeout?: number; system?: string; cap?: number; id?: string; dir?: string }) {
  const client = new RouterClient({ apiKey: process.env.ROUTER_API_KEY, apiRoot: process.env.ROUTER_API_ROOT ?? settings.root, timeoutMs: settings.timeout, maxRetries: undefined, proxy: { httpProxy: process.env.HTTP_PROXY } });
  const call: CallOptions = { signal, timeoutMs: settings.timeout };
  await client.chat.create({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }, { ...call, answering: undefined });
  const guard = new SpendGuard({ prices: serviceListPrices(client), maxCost: settings.cap, env: process.env, signal });
  const store = new ConversationStore({ dir: settings.dir });
  const tools = await ToolSet.open({ mcp: undefined, tools: [], signal });
  const options: PromptOptions = { system: settings.system, signal, guard, tools, onText: undefined };
  await chatModel(client, 'local/echo').conversation({ store, id: settings.id }).prompt('hi', options);
  await chatWithTools(client, { model: 'local/tools', messages: [] }, { tools: tools.tools, guard, signal, maxRounds: undefined });
  const listed = await client.models.list();
  const price: string | undefined = listed[0]?.pricing?.prompt;
  const room: number | null | undefined = listed[0]?.top_provider?.max_completion_tokens ?? listed[0]?.context_length;
  console.log(price, room, listed[0]?.architecture?.input_modalities?.includes('image'));
  const embedded = await client.embeddings.create({ model: 'local/embed', input: 'hi' }, { sessionId: settings.id });
  const by: string | undefined = embedded.provider;
  const upstream: number | null | undefined = embedded.usage.cost_details?.upstream_inference_cost;
  console.log(by, upstream, embedded.usage.prompt_tokens_details?.['image_tokens']);
  // @ts-expect-error: a batch is routed to no model: it takes no session (refused at run time too)
  await client.batches.list({}, { sessionId: settings.id });
  // @ts-expect-error: nor do credits take routing metadata
  await client.credits.get({ routerMetadata: true });
  // @ts-expect-error: a decision's answer carries no routing metadata
  await client.decisions.create({ model: 'local/judge', state: 'x', questions: {} }, { routerMetadata: true });
  try {
    await client.models.list();
  } catch (err) {
    if (!(err instanceof RouterError)) throw err;
    const code: number | string | undefined = err.code;
    switch (err.code) {
      case 'refused':
      case 401:
        return code;
    }
  }
  return undefined;
}
`;

it('a program checked with strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess passes optional settings on, switches on a RouterError\'s code and reads a model\'s prices', () => {
  const file = join(ROOT, `.library-strict-types-${process.pid}.mts`);
  writeFileSync(file, PROGRAM);
  try {
    const program = ts.createProgram([file], {
      module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true,
      exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, noImplicitOverride: true, noEmit: true, types: ['node'],
    });
    expect(diagnosticLines(program, file)).toEqual([]);
  } finally {
    rmSync(file, { force: true });
  }
}, 300_000);
