import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

// The edges of aliases, role parameters and model options: Tab, chat -i's /model and /role, an alias's options, an unlisted model.
let t: CliEnv;
beforeAll(async () => {
  t = await startCliEnv();
  mkdirSync(join(t.dir, 'config', 'roles'), { recursive: true });
  expect((await t.run(['aliases', 'set', 'fast', 'local/echo'])).code).toBe(0);
  expect((await t.run(['aliases', 'set', 'wordy', 'local/lorem'])).code).toBe(0);
});
afterAll(() => t.close());

describe('Tab after --model', () => {
  it('offers the aliases with the model ids, the aliases read from their file with no service at hand', async () => {
    const offered = (await t.run(['__complete', 'models'])).stdout.split('\n');
    expect(offered).toEqual(expect.arrayContaining(['fast', 'wordy', 'local/echo']));
    const before = t.requests().length;
    const offline = await t.run(['__complete', 'models'], { env: { ROUTER_API_KEY: '', ROUTER_API_ROOT: 'http://127.0.0.1:9/api/v1', ROUTER_STATE_DIR: join(t.dir, 'no-state') } });
    expect(offline).toMatchObject({ code: 0, stdout: 'fast\nwordy\n', stderr: '' });
    expect(t.requests().length).toBe(before);
    // Where only a model id is taken (aliases set's model, --models), no alias is offered.
    expect((await t.run(['__complete', 'model-ids'])).stdout.split('\n')).not.toContain('fast');
    for (const shell of ['bash', 'zsh', 'fish']) expect((await t.run(['completion', shell])).stdout).toContain('router __complete models');
  });
});

describe('models options of an alias', () => {
  it("are its model's: set, show and clear say so, and stay with the model when the alias moves", async () => {
    expect((await t.run(['models', 'options', 'set', 'fast', 'top-p', '0.7'])).code).toBe(0);
    expect(await t.run(['models', 'options', 'set', 'fast', 'top-p', '0.8'])).toMatchObject({ code: 0, stderr: 'note: top-p of local/echo (alias fast) was 0.7; now 0.8\n' });
    expect((await t.run(['models', 'options', 'show', 'fast'])).stdout).toContain('top-p\t0.8\n');
    expect((await t.run(['models', 'options', 'show', 'local/echo'])).stdout).toContain('top-p\t0.8\n');
    expect(await t.run(['models', 'options', 'clear', 'fast', 'top-k'])).toMatchObject({ code: 5, stderr: 'error: no option top-k kept for local/echo (alias fast)\n' });
    expect((await t.run(['aliases', 'set', 'fast', 'local/tts'])).code).toBe(0);
    expect((await t.run(['models', 'options', 'show', 'local/echo'])).stdout).toContain('top-p\t0.8\n');
    expect((await t.run(['models', 'options', 'show', 'fast'])).stdout).toBe('');
    expect((await t.run(['aliases', 'set', 'fast', 'local/echo'])).code).toBe(0);
    expect((await t.run(['models', 'options', 'clear', 'fast', 'top-p'])).code).toBe(0);
  });
});

describe('aliases set of a model the service does not list', () => {
  it('is a note from the kept list, set all the same; nothing sent, and nothing said without a kept list', async () => {
    expect((await t.run(['models'])).code).toBe(0);
    const before = t.requests().length;
    const r = await t.run(['aliases', 'set', 'typo', 'local/ecko']);
    expect(r).toMatchObject({ code: 0, stderr: `note: local/ecko is not in the model list of ${t.apiRoot} (did you mean local/echo?); set all the same\n` });
    expect((await t.run(['aliases', 'set', 'ok', 'local/echo'])).stderr).toBe('');
    const unkept = await t.run(['aliases', 'set', 'typo2', 'local/ecko'], { env: { ROUTER_STATE_DIR: join(t.dir, 'no-state') } });
    expect(unkept).toMatchObject({ code: 0, stderr: '' });
    expect(t.requests().length).toBe(before);
    expect((await t.run(['aliases', 'list'])).stdout).toContain('typo2\tlocal/ecko\n');
  });
});
