import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BadRequestError, RouterClient, ValidationError } from '../../src/client/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { ConversationStore, chatModel } from '../../src/kit/index.js';
import { runInProcess } from '../support/inprocess.js';

// llm's `get_model("alias")` takes the aliases its CLI keeps; the kit's chatModel() the ones `router aliases set` keeps,
// and a prompt's `model` option too: a name without a slash, which the service would refuse as a model id.
let emu: Emulator;
let dir: string;
let client: RouterClient;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-kit-aliases-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  const { apiKey } = emu.store.firstKeys();
  client = new RouterClient({ apiKey, apiRoot: emu.apiRoot });
  env = { ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: apiKey, ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: join(dir, 'cli-state'), ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_MANAGEMENT_KEY: '' };
  for (const [name, model] of [['fast', 'local/echo'], ['wordy', 'local/lorem']]) expect(await runInProcess(['aliases', 'set', name, model], { env })).toMatchObject({ code: 0 });
});
afterAll(async () => {
  await client.close();
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const sentModels = (from: number) => emu.requestLog.slice(from).filter((e) => e.path.endsWith('/chat/completions')).map((e) => (e.body as { model: string }).model);

it('chatModel() takes an alias the CLI set, as the model id it names', async () => {
  const from = emu.requestLog.length;
  const model = chatModel(client, 'fast', { env });
  expect(model.id).toBe('local/echo');
  expect((await model.prompt('by its alias')).text).toBe('by its alias');
  expect(sentModels(from)).toEqual(['local/echo']);
});

it("a prompt's model option, of a model or a conversation, takes an alias too; the conversation keeps the id", async () => {
  const from = emu.requestLog.length;
  const model = chatModel(client, 'local/lorem', { env });
  expect((await model.prompt('echo me', { model: 'fast' })).model).toBe('local/echo');
  const store = new ConversationStore({ env });
  const talk = model.conversation({ store, id: 'aliased' });
  await talk.prompt('echo me too', { model: 'fast' });
  expect(store.load('aliased').model).toBe('local/echo');
  expect(sentModels(from)).toEqual(['local/echo', 'local/echo']);
});

it('a model id is never read as an alias; a name that is none is sent as given; a wrong option is refused', async () => {
  expect(chatModel(client, 'local/echo', { env }).id).toBe('local/echo');
  const unknown = chatModel(client, 'slow', { env });
  expect(unknown.id).toBe('slow');
  await expect(unknown.prompt('x')).rejects.toBeInstanceOf(BadRequestError);
  expect(() => chatModel(client, 'fast', { envs: env } as never)).toThrow(ValidationError);
});
