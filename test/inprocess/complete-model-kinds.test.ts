import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

// A Tab after a command's --model (or --models) offers the models that command takes: the emulator's list says
// each model's kind by its output modalities (embeddings, speech, text), as the service's does.
let t: CliEnv;
beforeAll(async () => {
  t = await startCliEnv();
  for (const [alias, model] of [['voice1', 'local/tts'], ['vec', 'local/embed'], ['fast', 'local/echo']]) expect((await t.run(['aliases', 'set', alias!, model!])).code).toBe(0);
});
afterAll(() => t.close());

/** What fish offers after `router PATH FLAG `: the kind its script asks `router __complete` for, then that answer. */
async function offered(path: string, flag: string, env: Record<string, string> = {}): Promise<string[]> {
  const script = (await t.run(['completion', 'fish'])).stdout;
  const line = script.split('\n').find((l) => l.includes(`-n '__router_at ${path}'`) && l.includes(` -l ${flag.slice(2)} `));
  const kind = /\(router __complete (\S+) 2>\/dev\/null\)/.exec(line ?? '')?.[1];
  expect(kind, `${path} ${flag}: ${line}`).toBeDefined();
  const r = await t.run(['__complete', kind!], { env });
  expect(r).toMatchObject({ code: 0, stderr: '' });
  return r.stdout.split('\n').filter(Boolean);
}

describe('Tab after a model flag', () => {
  it('offers speech models after speak --model and --models, and no chat or embedding model', async () => {
    for (const flag of ['--model', '--models']) {
      const ids = await offered('speak', flag);
      expect(ids).toEqual(expect.arrayContaining(['local/tts', 'local/tts-basic']));
      expect(ids.filter((id) => ['local/echo', 'local/lorem', 'local/embed', 'fast', 'vec'].includes(id)), flag).toEqual([]);
    }
    expect(await offered('speak', '--model')).toContain('voice1');
  });

  it('offers embedding models after embed, embed-multi and similar --model', async () => {
    for (const path of ['embed', 'embed-multi', 'similar']) {
      const ids = await offered(path, '--model');
      expect(ids, path).toEqual(['vec', 'local/embed']);
    }
  });

  it('offers chat models after chat, responses, decide and login --model: no speech or embedding model', async () => {
    for (const path of ['chat', 'responses', 'decide', 'login']) {
      const ids = await offered(path, '--model');
      expect(ids, path).toEqual(expect.arrayContaining(['fast', 'local/echo', 'local/lorem', 'local/painter']));
      expect(ids.filter((id) => ['local/tts', 'local/tts-basic', 'local/embed', 'voice1', 'vec'].includes(id)), path).toEqual([]);
    }
  });

  it("offers the defaults set for the command's kind, from the environment: not another kind's", async () => {
    const env = { ROUTER_MODEL: 'acme/chatty', ROUTER_SPEECH_MODEL: 'acme/voice', ROUTER_EMBED_MODEL: 'acme/vectors' };
    expect(await offered('speak', '--model', env)).toContain('acme/voice');
    expect(await offered('speak', '--model', env)).not.toContain('acme/chatty');
    expect(await offered('embed', '--model', env)).toEqual(['vec', 'acme/vectors', 'local/embed']);
    expect(await offered('chat', '--model', env)).toContain('acme/chatty');
    expect(await offered('chat', '--model', env)).not.toContain('acme/voice');
  });

  it('still offers every model where a command takes any kind (logs --model, batch create --model)', async () => {
    for (const path of ['logs', 'batch create']) expect(await offered(path, '--model'), path).toEqual(expect.arrayContaining(['local/echo', 'local/tts', 'local/embed']));
  });
});
