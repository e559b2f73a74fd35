import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { runJob } from '../../src/batch/index.js';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// An id of the right shape but over 256 characters is refused for its length, wherever it is given:
// "must look like <author>/<slug>" named a shape it has (config set and the environment said why).
const long = `local/${'a'.repeat(300)}`;

const t = startedForAll(() => startCliEnv());

it('a --model, a --models and a batch line of 306 characters: said too long, nothing sent', async () => {
  const before = t.requests().length;
  const flag = await t.run(['chat', '--model', long, 'hi']);
  expect(flag).toMatchObject({ code: 2, stdout: '' });
  expect(flag.stderr).toMatch(/is invalid: it is 306 characters long: a model id has at most 256; see "router chat --help"\n$/);
  const list = await t.run(['chat', '--models', `local/echo,${long}`, 'hi']);
  expect(list.stderr).toMatch(/is invalid: a model id of 306 characters: one has at most 256; see "router chat --help"\n$/);
  const file = join(t.dir, 'long-model.jsonl');
  writeFileSync(file, JSON.stringify({ custom_id: 'a', body: { model: long, messages: [{ role: 'user', content: 'a' }] } }) + '\n');
  const line = await t.run(['batch', 'run', file]);
  expect(line).toMatchObject({ code: 2, stdout: '' });
  expect(line.stderr).toContain('long-model.jsonl:1: body.model is 306 characters long: a model id has at most 256');
  expect(line.stderr).not.toContain(long);
  expect(t.requests()).toHaveLength(before);
});

it("runJob's model option of 306 characters: a BatchError naming its length", async () => {
  const file = join(t.dir, 'short.jsonl');
  writeFileSync(file, JSON.stringify({ custom_id: 'a', body: { messages: [{ role: 'user', content: 'a' }] } }) + '\n');
  const client = new RouterClient({ apiRoot: t.apiRoot, apiKey: t.env.ROUTER_API_KEY! });
  try {
    const err = await runJob(client, { input: file, model: long, env: { ROUTER_STATE_DIR: join(t.dir, 'long-state') } }).catch((e: Error) => e);
    expect(err).toMatchObject({ name: 'BatchError', message: 'model is 306 characters long: a model id has at most 256' });
  } finally {
    await client.close();
  }
});
