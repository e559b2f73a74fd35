import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';
import { readAliases, removeAlias, resolveModel, setAlias } from '../../src/kit/index.js';

// llm's `aliases`: a short name for a model id, taken wherever a model id is (docs/commands.md, aliases).
let t: InProcessEnv;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  t = await startInProcessEnv();
  env = { ...process.env, ROUTER_CONFIG_DIR: join(t.dir, 'config') };
});
afterAll(() => t.close());

const body = async (args: string[], o: Parameters<InProcessEnv['run']>[1] = {}) => {
  const r = await t.run([...args, '--dry-run'], o);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
};

describe('the library', () => {
  it('sets, reads, resolves and removes an alias in aliases.json', () => {
    expect(setAlias('lib-fast', 'local/echo', env)).toBeUndefined();
    expect(setAlias('lib-fast', 'local/lorem', env)).toBe('local/echo');
    expect(readAliases(env)['lib-fast']).toBe('local/lorem');
    expect(resolveModel('lib-fast', env)).toBe('local/lorem');
    expect(resolveModel('local/echo', env)).toBe('local/echo');
    expect(resolveModel('toString', env)).toBeUndefined();
    removeAlias('lib-fast', env);
    expect(resolveModel('lib-fast', env)).toBeUndefined();
    expect(() => removeAlias('lib-fast', env)).toThrow(expect.objectContaining({ code: 'not_found' }));
  });

  it('refuses a name with a slash: an alias never shadows a model id', () => {
    expect(() => setAlias('local/echo', 'local/lorem', env)).toThrow(expect.objectContaining({ code: 'invalid_name' }));
    expect(() => setAlias('x', 'echo', env)).toThrow(expect.objectContaining({ code: 'invalid_model' }));
  });
});

describe('router aliases', () => {
  it('set, list (piped and --json), remove', async () => {
    expect((await t.run(['aliases', 'set', 'fast', 'local/echo'])).code).toBe(0);
    expect((await t.run(['aliases', 'set', 'wordy', 'local/lorem'])).code).toBe(0);
    const listed = await t.run(['aliases', 'list']);
    expect(listed.stdout).toContain('fast\tlocal/echo\n');
    expect(JSON.parse((await t.run(['aliases', 'list', '--json'])).stdout)).toEqual(expect.arrayContaining([{ name: 'fast', model: 'local/echo' }, { name: 'wordy', model: 'local/lorem' }]));
    const replaced = await t.run(['aliases', 'set', 'wordy', 'local/echo']);
    expect(replaced.stderr).toContain('alias wordy was local/lorem; now local/echo');
    expect((await t.run(['aliases', 'remove', 'wordy'])).code).toBe(0);
    expect((await t.run(['aliases', 'list'])).stdout).not.toContain('wordy');
    expect((await t.run(['aliases', 'path'])).stdout).toBe(`${join(t.dir, 'config', 'aliases.json')}\n`);
  });

  it('refuses a bad name (exit 2) and an unknown one to remove (exit 5), naming the aliases', async () => {
    await t.run(['aliases', 'set', 'fast', 'local/echo']);
    expect(await t.run(['aliases', 'set', 'openai/gpt-4o', 'local/echo'])).toMatchObject({ code: 2, stderr: expect.stringContaining('never shadows a model id') });
    expect(await t.run(['aliases', 'set', 'x', 'echo'])).toMatchObject({ code: 2 });
    expect(await t.run(['aliases', 'remove', 'nope'])).toMatchObject({ code: 5, stderr: expect.stringMatching(/no alias "nope"; the aliases are: .*fast/) });
  });

  it('is no longer answered with a hint for llm users', async () => {
    const r = await t.run(['aliases']);
    expect(r.stderr).not.toContain('no model aliases here');
  });
});

describe('an alias works wherever a model id is taken', () => {
  beforeAll(async () => {
    await t.run(['aliases', 'set', 'fast', 'local/echo']);
    await t.run(['aliases', 'set', 'vec', 'local/embed']);
    await t.run(['aliases', 'set', 'voice', 'local/tts']);
  });

  it('chat and responses --model', async () => {
    expect((await body(['chat', '-m', 'fast', 'hi'])).model).toBe('local/echo');
    expect((await body(['responses', '-m', 'fast', 'hi'])).model).toBe('local/echo');
    const answered = await t.run(['chat', '-m', 'fast', 'hi']);
    expect(answered).toMatchObject({ code: 0, stdout: 'hi\n' });
  });

  it('embed and speak --model', async () => {
    expect((await body(['embed', '-m', 'vec', 'hi'])).model).toBe('local/embed');
    expect((await body(['speak', '-m', 'voice', '--voice', 'alloy', 'hi'])).model).toBe('local/tts');
  });

  it("a role's model, the profile's model and ROUTER_MODEL", async () => {
    mkdirSync(join(t.dir, 'config', 'roles'), { recursive: true });
    writeFileSync(join(t.dir, 'config', 'roles', 'quick.md'), '---\nmodel: fast\n---\nBe terse.\n');
    expect((await body(['chat', '--role', 'quick', 'hi'])).model).toBe('local/echo');
    expect((await body(['chat', 'hi'], { env: { ROUTER_MODEL: 'fast' } })).model).toBe('local/echo');
    expect((await body(['embed', 'hi'], { env: { ROUTER_EMBED_MODEL: 'vec' } })).model).toBe('local/embed');
    const set = await t.run(['config', 'set', 'model', 'fast', '--profile', 'aliased']);
    expect(set.code, set.stderr).toBe(0);
    expect((await body(['chat', 'hi'], { env: { ROUTER_PROFILE: 'aliased' } })).model).toBe('local/echo');
  });

  it('an unknown one is refused before anything is sent, with the alias meant', async () => {
    expect(await t.run(['chat', '-m', 'fsat', 'hi'])).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('or name an alias (did you mean fast?)') });
    expect(await t.run(['chat', '-m', 'echo', 'hi'])).toMatchObject({ code: 2, stderr: expect.stringContaining('did you mean local/echo?') });
    writeFileSync(join(t.dir, 'config', 'roles', 'typo.md'), '---\nmodel: fsat\n---\nBe terse.\n');
    expect(await t.run(['chat', '--role', 'typo', 'hi'])).toMatchObject({ code: 2, stderr: expect.stringContaining('role typo: model "fsat"') });
  });

  it('a model setting naming an alias no longer there says an alias was a way to name it', async () => {
    const r = await t.run(['chat', 'hi'], { env: { ROUTER_MODEL: 'gone' } });
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'error: ROUTER_MODEL must look like <author>/<slug> or name an alias, got "gone" (router aliases list)\n' });
  });

  it('an alias written by hand to name no model id (another alias, a typo) is refused, nothing sent', async () => {
    const path = join(t.dir, 'config', 'aliases.json');
    const kept = readFileSync(path);
    writeFileSync(path, JSON.stringify({ loop: 'back', back: 'loop', typo: 'echo' }));
    try {
      for (const args of [['chat', '-m', 'loop', 'hi'], ['chat', '-m', 'typo', '--dry-run', 'hi'], ['models', 'options', 'set', 'typo', 'seed', '1']]) {
        const r = await t.run(args);
        expect(r, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
        expect(r.stderr).toMatch(/^error: alias (loop|typo) in .*aliases\.json names "(back|echo)", not a model id/);
      }
      expect((await t.run(['aliases', 'remove', 'typo'])).code).toBe(0);
    } finally {
      writeFileSync(path, kept);
    }
  });

  it('a damaged aliases.json is one line naming it, nothing sent', async () => {
    const path = join(t.dir, 'config', 'aliases.json');
    const kept = readFileSync(path);
    writeFileSync(path, '{"fast":');
    try {
      const r = await t.run(['chat', '-m', 'fast', 'hi']);
      expect(r).toMatchObject({ code: 1, stdout: '', stderr: expect.stringMatching(/^error: .*aliases\.json is damaged \(not valid JSON/) });
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      writeFileSync(path, kept);
    }
  });
});
