import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startInProcessEnv } from '../support/inprocess-env.js';
import { clearModelOptions, optionsOf, setModelOption } from '../../src/kit/index.js';
import { startedForAll } from '../support/for-all.js';

// llm's `models options`: default options of a model, used when it is chosen; flags (and a role) go over them.
const t = startedForAll(() => startInProcessEnv());

const body = async (args: string[]) => {
  const r = await t.run([...args, '--dry-run']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
};

describe('the library', () => {
  it('sets, reads and clears a model\'s options in model-options.json', () => {
    const env = { ...process.env, ROUTER_CONFIG_DIR: join(t.dir, 'lib-config') };
    expect(setModelOption('a/b', 'temperature', '0.5', env)).toBeUndefined();
    expect(setModelOption('a/b', 'seed', '7', env)).toBeUndefined();
    expect(optionsOf('a/b', env)).toEqual({ temperature: '0.5', seed: '7' });
    expect(clearModelOptions('a/b', 'seed', env)).toBe(true);
    expect(clearModelOptions('a/b', 'seed', env)).toBe(false);
    expect(clearModelOptions('a/b', undefined, env)).toBe(true);
    expect(optionsOf('a/b', env)).toEqual({});
  });
});

describe('router models options', () => {
  it('set, show, list; chat and responses use them for that model only; a flag goes over them', async () => {
    expect((await t.run(['models', 'options', 'set', 'local/echo', 'temperature', '0.5'])).code).toBe(0);
    expect((await t.run(['models', 'options', 'set', 'local/echo', 'max_tokens', '200'])).code).toBe(0);
    expect((await t.run(['models', 'options', 'show', 'local/echo'])).stdout).toBe('temperature\t0.5\nmax-tokens\t200\n');
    expect((await t.run(['models', 'options', 'list'])).stdout).toContain('local/echo\ttemperature\t0.5\n');
    expect(JSON.parse((await t.run(['models', 'options', 'show', 'local/echo', '--json'])).stdout)).toEqual([{ option: 'temperature', value: '0.5' }, { option: 'max-tokens', value: '200' }]);
    expect(await body(['chat', '-m', 'local/echo', 'hi'])).toMatchObject({ temperature: 0.5, max_completion_tokens: 200 });
    expect(await body(['responses', '-m', 'local/echo', 'hi'])).toMatchObject({ temperature: 0.5, max_output_tokens: 200 });
    expect((await body(['chat', '-m', 'local/echo', '-t', '0.1', 'hi'])).temperature).toBe(0.1);
    expect((await body(['chat', '-m', 'local/lorem', 'hi'])).temperature).toBeUndefined();
    expect((await body(['chat', 'hi'])).temperature).toBeUndefined();
  });

  it("a role's setting goes over them; the profile's model and an alias name the model", async () => {
    mkdirSync(join(t.dir, 'config', 'roles'), { recursive: true });
    writeFileSync(join(t.dir, 'config', 'roles', 'cool.md'), '---\nmodel: local/echo\ntemperature: 0.2\n---\nBe terse.\n');
    expect(await body(['chat', '--role', 'cool', 'hi'])).toMatchObject({ temperature: 0.2, max_completion_tokens: 200 });
    const r = await t.run(['chat', '--dry-run', 'hi'], { env: { ROUTER_MODEL: 'local/echo' } });
    expect(JSON.parse(r.stdout).temperature).toBe(0.5);
    await t.run(['aliases', 'set', 'fast', 'local/echo']);
    expect((await body(['chat', '-m', 'fast', 'hi'])).temperature).toBe(0.5);
    expect((await t.run(['models', 'options', 'show', 'fast'])).stdout).toContain('temperature\t0.5');
  });

  it('refuses an unknown option or a bad value (exit 2), and clears', async () => {
    expect(await t.run(['models', 'options', 'set', 'local/echo', 'tools', 'x.json'])).toMatchObject({ code: 2, stderr: expect.stringContaining('"tools" is not an option a model keeps') });
    expect(await t.run(['models', 'options', 'set', 'local/echo', 'temperature', 'hot'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: temperature: "hot"/) });
    expect((await t.run(['models', 'options', 'clear', 'local/echo', 'temperature'])).code).toBe(0);
    expect((await body(['chat', '-m', 'local/echo', 'hi'])).temperature).toBeUndefined();
    expect(await t.run(['models', 'options', 'clear', 'local/echo', 'temperature'])).toMatchObject({ code: 5 });
    expect((await t.run(['models', 'options', 'clear', 'local/echo'])).code).toBe(0);
    expect((await t.run(['models', 'options', 'show', 'local/echo'])).stdout).toBe('');
  });
});
