import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import {
  AttachmentError, ConversationError, ConversationStore, SchemaError, SchemaMismatchError, ToolCallsError, ToolSet, answerSchema, attachmentFromBytes, chatModel, functionTool,
  readAttachment, toolEnv,
} from '../../src/kit/index.js';
import { runInProcess } from '../support/inprocess.js';

// Issue 44: conversations, attachments and schemas from src/kit, over real HTTP against the emulator;
// a conversation the library keeps is one the CLI shows and continues.
const ROOT = resolve(import.meta.dirname, '..', '..');
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

let emu: Emulator;
let dir: string;
let client: RouterClient;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-kit-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  const { apiKey } = emu.store.firstKeys();
  client = new RouterClient({ apiKey, apiRoot: emu.apiRoot });
  env = { ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: apiKey, ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: join(dir, 'cli-state'), ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_MANAGEMENT_KEY: '' };
});
afterAll(async () => {
  await client.close();
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const lastBody = () => emu.requestLog.filter((e) => e.path.endsWith('/chat/completions')).at(-1)!.body as Record<string, any>;

describe('attachments', () => {
  it('a file is sent as its part and kept by reference', async () => {
    writeFileSync(join(dir, 'dot.png'), PNG);
    const photo = await readAttachment(join(dir, 'dot.png'));
    expect(photo).toMatchObject({ kind: 'image', mediaType: 'image/png', filename: 'dot.png' });
    const r = await chatModel(client, 'local/vision').prompt('what is this?', { attachments: [photo] });
    expect(r.text).toMatch(/image\/png.*1x1/);
    expect(lastBody().messages[0].content[1]).toEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } });
    expect(r.messages[0]!.content).toBe(`what is this?\n[attachment: dot.png (image/png, ${PNG.length} bytes, sha256:${photo.sha256})]`);
  });

  it('what cannot be sent is an AttachmentError with its code, before anything is sent', async () => {
    const sent = emu.requestLog.length;
    writeFileSync(join(dir, 'empty.bin'), '');
    writeFileSync(join(dir, 'blob.bin'), Buffer.from([0, 1, 2, 3, 0xfe]));
    const codes = await Promise.all([join(dir, 'missing.png'), join(dir, 'empty.bin'), join(dir, 'blob.bin'), '/dev/zero', 'https://example.com/a.mp3'].map((s) => readAttachment(s).catch((e: unknown) => e)));
    // A device is read as a pipe is, within the bound (as `-a /dev/zero` is): too large, not unreadable.
    expect(codes.map((e) => (e instanceof AttachmentError ? e.code : e))).toEqual(['unreadable', 'empty', 'unknown_type', 'too_large', 'audio_url']);
    await expect(attachmentFromBytes(Buffer.alloc(20 * 1024 * 1024 + 1, 'a'))).rejects.toMatchObject({ code: 'too_large' });
    expect(emu.requestLog.length).toBe(sent);
  });
});

describe('streaming', () => {
  it('onText gets the answer as it comes, in pieces that make the whole', async () => {
    const pieces: string[] = [];
    const r = await chatModel(client, 'local/lorem').prompt('write fifty words', { onText: (t) => pieces.push(t), request: { max_completion_tokens: 60 } });
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(r.text);
    expect(r.model).toBe('local/lorem');
    expect(r.completion.choices[0]!.finish_reason).toMatch(/stop|length/);
  });
});

describe('schemas', () => {
  it('the answer is checked and given as a value; one that does not follow is a SchemaMismatchError', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const r = await chatModel(client, 'local/echo').prompt('a city', { schema });
    expect(r.json).toEqual(JSON.parse(r.text));
    expect(lastBody().response_format).toEqual({ type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } });
    // The emulator fills strings with words: a pattern of digits is not met.
    const digits = { type: 'object', properties: { code: { type: 'string', pattern: '^[0-9]+$' } }, required: ['code'] };
    const err = await chatModel(client, 'local/echo').prompt('x', { schema: digits }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaMismatchError);
    expect(err).toMatchObject({ code: 'mismatch', path: '/code', why: expect.stringMatching(/must match pattern/) });
  });

  it('a schema that is not one is a SchemaError', async () => {
    await expect(answerSchema('{"type":')).rejects.toMatchObject({ code: 'not_json' });
    await expect(answerSchema({ type: 'nonsense' })).rejects.toBeInstanceOf(SchemaError);
    await expect(answerSchema('[1]')).rejects.toMatchObject({ code: 'not_object' });
    await expect(answerSchema({ a: 1 })).rejects.toMatchObject({ code: 'not_schema' });
  });
});

describe('tools', () => {
  it('a function and an MCP server tool are run in a loop; calls it cannot run are a ToolCallsError', async () => {
    const add = functionTool('add', { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } }, ({ a, b }) => Number(a) + Number(b));
    const tools = await ToolSet.open({ tools: [add], mcp: [`'${process.execPath}' '${EVERYTHING}' stdio`], env: toolEnv(process.env) });
    try {
      const r = await chatModel(client, 'local/tools').prompt('please echo this', { tools });
      expect(r.text).toBe('From the tool results: echo answered: Echo: please echo this');
      expect(r.toolCalls.map((c) => [c.call.name, c.outcome.status])).toEqual([['echo', 'ok']]);
      expect(r.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      // Streamed: every round a stream, its text given piece by piece as well as whole.
      const pieces: string[] = [];
      const streamed = await chatModel(client, 'local/tools').prompt('please echo this', { tools, onText: (t) => pieces.push(t) });
      expect(streamed.text).toBe('From the tool results: echo answered: Echo: please echo this');
      expect(pieces.join('')).toBe(streamed.text);
      expect(streamed.usage?.total_tokens).toBeGreaterThan(0);
      expect(lastBody().stream).toBe(true);
      const sum = await chatModel(client, 'local/tools').prompt('add', { tools: [add] });
      expect(sum.text).toMatch(/^From the tool results: add answered: -?\d/);
      // beforeRequest sees the cost of the rounds answered: a cap it holds stops the loop before the next request.
      const asked = emu.requestLog.length;
      const seen: number[] = [];
      const capped = await chatModel(client, 'local/tools')
        .prompt('please echo this', { tools, beforeRequest: (_req, spent) => {
          seen.push(spent);
          if (spent > 0) throw new Error('over the cap');
        } })
        .catch((e: unknown) => e);
      expect(capped).toMatchObject({ message: 'over the cap' });
      expect(seen[0]).toBe(0);
      expect(seen[1]).toBeGreaterThan(0);
      expect(emu.requestLog.length - asked).toBe(1);
      const err = await chatModel(client, 'local/tools').prompt('please echo this', { tools, maxToolRounds: 0 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ToolCallsError);
      expect(err).toMatchObject({ code: 'max_rounds', calls: [{ name: 'echo' }] });
    } finally {
      await tools.close();
    }
  });
});

describe('conversations', () => {
  it('each prompt goes after the ones before; a store keeps it where router chat -c takes it up', async () => {
    const store = new ConversationStore({ env });
    const model = chatModel(client, 'local/echo');
    const talk = model.conversation({ store, id: 'kit-notes' });
    expect((await talk.prompt('the door code is 4711')).text).toBe('the door code is 4711');
    await talk.prompt('and the gate is blue', { system: 'be brief' });
    expect(lastBody().messages.map((m: { content: string }) => m.content)).toEqual(['be brief', 'the door code is 4711', 'the door code is 4711', 'and the gate is blue']);
    expect(store.load('kit-notes').messages).toHaveLength(5);
    expect(model.conversation({ store, last: true }).id).toBe('kit-notes');
    const shown = await runInProcess(['conversations', 'show', 'kit-notes'], { env });
    expect(shown.stdout).toContain('user: and the gate is blue');
    const cont = await runInProcess(['chat', '-c', '--model', 'local/echo', 'third'], { env });
    expect(cont).toMatchObject({ code: 0, stdout: 'third\n' });
    expect(store.load('kit-notes').messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['the door code is 4711', 'and the gate is blue', 'third']);
  });

  it('a turn the store cannot write throws the system\'s error, and the conversation holds it still', async () => {
    writeFileSync(join(dir, 'not-a-folder'), '');
    const talk = chatModel(client, 'local/echo').conversation({ store: new ConversationStore({ dir: join(dir, 'not-a-folder', 'kept') }) });
    await expect(talk.prompt('remember this')).rejects.toMatchObject({ code: 'ENOTDIR' });
    expect(talk.messages.map((m) => m.content)).toEqual(['remember this', 'remember this']);
  });

  it('a store says what is wrong with a ConversationError code', () => {
    const store = new ConversationStore({ dir: join(dir, 'kept') });
    mkdirSync(store.dir, { recursive: true });
    writeFileSync(join(store.dir, 'torn.json'), '{"id":');
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof ConversationError ? e.code : e;
      }
    };
    expect([code(() => store.load('nope')), code(() => store.load('torn')), code(() => store.load('.hidden')), code(() => store.delete('nope'))]).toEqual(['not_found', 'damaged', 'invalid_id', 'not_found']);
    expect(store.find()).toEqual({ ids: [], damaged: ['torn'] });
    expect(store.last()).toBeNull();
  });
});
