// A providers file that names a fake model's id (local/…): an upstream may stand in for it as its own
// kind of model, never as another. Before, `embedding_models: { local/echo: … }` was taken: chat still
// answered `local/echo` from the fake model while `GET /v1/models` no longer listed it (nor a fake chat
// model named as speech there), so a user's client could not find a model the gateway served.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startEmulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startCliEnv());

const file = (name: string, text: string) => {
  writeFileSync(join(t.dir, name), text);
  return join(t.dir, name);
};
const UP = 'name: up, base_url: "http://127.0.0.1:9/v1"';

describe("a fake model's id in a providers file", () => {
  it('as another kind of model, with the fake models on: one line, exit 2, nothing started', async () => {
    const embed = file('embed.yaml', `providers:\n  - { ${UP}, embedding_models: { local/echo: e } }\n`);
    expect(await t.run(['serve', '--port', '0', '--state', join(t.dir, 's1'), '--providers', embed])).toMatchObject({
      code: 2,
      stdout: '',
      stderr: `error: --providers ${embed}: model local/echo is listed for embedding (provider up) and is a fake chat model here (local_models is on): one id, one kind of model; give it another id, or set local_models: false\n`,
    });
    const speech = file('speech.yaml', `providers:\n  - { ${UP}, speech_models: { local/lorem: t } }\n`);
    expect((await t.run(['serve', '--port', '0', '--state', join(t.dir, 's2'), '--providers', speech])).stderr).toBe(
      `error: --providers ${speech}: model local/lorem is listed for speech (provider up) and is a fake chat model here (local_models is on): one id, one kind of model; give it another id, or set local_models: false\n`,
    );
  });

  it('as another kind with local_models: false, or as its own kind: served, and listed where its kind is', async () => {
    expect(parseProviders(`providers:\n  - { ${UP}, embedding_models: { local/echo: e } }\nlocal_models: false\n`, {}).providers[0]!.models[0]).toMatchObject({ id: 'local/echo', kind: 'embedding' });
    const config = parseProviders(`providers:\n  - { ${UP}, models: { local/echo: m }, embedding_models: { local/embed: e } }\n`, {});
    const gateway = await startEmulator({ stateDir: join(t.dir, 'gw'), port: 0, gateway: { config } });
    try {
      const key = gateway.store.firstKeys().apiKey;
      const list = async (path: string) => {
        const res = await fetch(`${gateway.apiRoot}/v1/${path}`, { headers: { authorization: `Bearer ${key}` } });
        return ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id);
      };
      expect(await list('models')).toEqual(expect.arrayContaining(['local/echo', 'local/lorem']));
      expect(await list('embeddings/models')).toContain('local/embed');
    } finally {
      await gateway.close();
    }
  });
});
