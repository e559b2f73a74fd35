import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { RESOURCE_CALLS, RouterClient, ValidationError } from '../../src/client/index.js';
import { attachmentFromBytes, chatModel, chatWithTools, connectMcp, ConversationStore, fetchFragment, FragmentStore, modelSampler, serviceListPrices, SpendGuard, ToolSet } from '../../src/kit/index.js';
import { driveJob, openJob, runJob, watchBatch } from '../../src/batch/index.js';
import { emulatorPerFile } from '../support/inprocess-env.js';
import { tempFolder } from '../support/temp-folder.js';

// A program in JavaScript has no compiler to say that `{ timeout: 5000 }` is no option of a call: before, every call
// but `new RouterClient()` (n12) left an option it did not know unread, silently (a chat with no bound, a guard with no
// cap, a job with no watch). Each call now refuses it with a ValidationError naming the option meant, before anything
// is sent or written. The client's calls are checked from one table (RESOURCE_CALLS), which this test walks.
let emu: Emulator;
emulatorPerFile('router-call-options-', (f) => ({ emu } = f));
const dir = tempFolder('router-call-options-');

/** What a call does with an option it does not know: its error, or 'taken' when it went on. */
async function refusal(call: () => unknown): Promise<unknown> {
  try {
    const made = call();
    if (made && typeof made === 'object' && Symbol.asyncIterator in made && !('then' in made)) await (made as AsyncGenerator).next();
    else await made;
    return 'taken';
  } catch (err) {
    return err;
  }
}

const said = (err: unknown) => (err instanceof ValidationError ? `${err.code}: ${err.message}` : `not refused: ${err instanceof Error ? err.message : String(err)}`);

describe('an option a call does not know, from JavaScript', () => {
  it('every call of every resource refuses it, naming the nearest, and sends nothing', async () => {
    const key = emu.store.firstKeys().apiKey;
    const client = new RouterClient({ apiKey: key, apiRoot: emu.apiRoot, maxRetries: 0 });
    const before = emu.requestLog.length;
    const results: string[] = [];
    for (const [name, calls] of Object.entries(RESOURCE_CALLS)) {
      for (const [method, spec] of Object.entries(calls)) {
        if (!spec) continue;
        const args: unknown[] = Array.from({ length: spec[0] }, () => ({}));
        const resource = (client as unknown as Record<string, Record<string, (...a: unknown[]) => unknown>>)[name]!;
        results.push(said(await refusal(() => resource[method]!(...args, { timeout: 5000 }))));
      }
    }
    expect(results.length).toBe(28);
    for (const [i, line] of results.entries()) expect(line, `call ${i}`).toMatch(/^invalid_request: client\.[a-z]+\.[a-zA-Z]+\(\) has no option "timeout": did you mean timeoutMs\?$/);
    expect(emu.requestLog.length).toBe(before);
    // Another SDK's name and a name near none are said as such.
    expect(said(await refusal(() => client.chat.create({ model: 'local/echo', messages: [] }, { abortSignal: AbortSignal.timeout(1000) } as never)))).toBe('invalid_request: client.chat.create() has no option "abortSignal": did you mean signal?');
    expect(said(await refusal(() => client.models.list({ modalities: 'all' } as never)))).toBe('invalid_request: client.models.list() has no option "modalities"; it takes signal, timeoutMs, headers, outputModalities');
    await client.close();
  });

  it('a known option given as undefined is one not given, in every call it is passed to', async () => {
    const client = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot });
    const plain = { signal: undefined, timeoutMs: undefined, headers: undefined };
    const unset = { ...plain, sessionId: undefined, routerMetadata: undefined };
    const asked = { model: 'local/echo', messages: [{ role: 'user' as const, content: 'unset' }], temperature: undefined, stream_options: { include_usage: undefined } };
    expect((await client.chat.create(asked, { ...unset, answering: undefined })).choices[0]?.message.content).toBe('unset');
    const chunks = [];
    for await (const chunk of await client.chat.stream(asked, unset)) chunks.push(chunk);
    // The usage chunk is asked for with the program's stream_options saying include_usage: undefined.
    expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
    expect((await client.models.list({ ...plain, outputModalities: undefined })).length).toBeGreaterThan(0);
    for await (const page of client.batches.listAll({ after: undefined, limit: undefined }, plain)) expect(page.data).toBeInstanceOf(Array);
    await client.close();
  });

  it("the kit's and the batch engine's calls refuse it too, naming the nearest (before: left unread)", async () => {
    const client = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot });
    const env = { ...process.env, ROUTER_STATE_DIR: dir() };
    const prices = serviceListPrices(client);
    const guard = new SpendGuard({ prices, env });
    const held = { job: {}, release: () => {}, made: false } as never;
    const cases: [() => unknown, string][] = [
      [() => chatModel(client, 'local/echo').prompt('hi', { sytem: 'be brief' } as never), 'prompt() has no option "sytem": did you mean system?'],
      [() => chatModel(client, 'local/echo').conversation({ stor: new ConversationStore({ env }) } as never), 'conversation() has no option "stor": did you mean store?'],
      [() => chatModel(client, 'fast', { evn: env } as never), 'chatModel() has no option "evn": did you mean env?'],
      [() => chatModel(client, 'local/echo').conversation().prompt('hi', { gaurd: guard } as never), 'prompt() has no option "gaurd": did you mean guard?'],
      [() => chatWithTools(client, { model: 'local/tools', messages: [] }, { tools: new Map(), maxRound: 2 } as never), 'chatWithTools() has no option "maxRound": did you mean maxRounds?'],
      [() => ToolSet.open({ mcps: ['npx some-server'] } as never), 'ToolSet.open() has no option "mcps": did you mean mcp?'],
      [() => connectMcp('npx some-server', { env: {}, startTimeout: 10 } as never), 'connectMcp() has no option "startTimeout": did you mean startTimeoutMs?'],
      [() => modelSampler(client, 'local/echo', { gard: guard } as never), 'modelSampler() has no option "gard": did you mean guard?'],
      [() => new SpendGuard({ prices, env, maxcost: 0.01 } as never), 'new SpendGuard() has no option "maxcost": did you mean maxCost?'],
      [() => new ConversationStore({ dirr: dir() } as never), 'new ConversationStore() has no option "dirr": did you mean dir?'],
      [() => new FragmentStore({ dirr: dir() } as never), 'new FragmentStore() has no option "dirr": did you mean dir?'],
      [() => fetchFragment(`${emu.apiRoot}/models`, { timeout: 100 } as never), 'fetchFragment() has no option "timeout": did you mean timeoutMs?'],
      [() => attachmentFromBytes(Buffer.from('hi'), { fileName: 'a.txt' } as never), 'attachmentFromBytes() has no option "fileName": did you mean filename?'],
      [() => runJob(client, { input: 'none.jsonl', env, intervall: 1 } as never), 'runJob() has no option "intervall": did you mean interval?'],
      [() => openJob({ input: 'none.jsonl', env, watch: true } as never), 'openJob() has no option "watch"; it takes input, resume, endpoint, model, defaultModel, provider, maxRequests, maxBytes, fresh, apiRoot, env, on'],
      [() => driveJob(held, async () => client, { env, retryfailed: true } as never), 'driveJob() has no option "retryfailed": did you mean retryFailed?'],
      [() => watchBatch(client, 'batch_none', { offlineTimeOut: 5 } as never), 'watchBatch() has no option "offlineTimeOut": did you mean offlineTimeout?'],
    ];
    const before = emu.requestLog.length;
    for (const [call, message] of cases) expect(said(await refusal(call))).toBe(`invalid_request: ${message}`);
    expect(emu.requestLog.length).toBe(before);
    await client.close();
  });
});
