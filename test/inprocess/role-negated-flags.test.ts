import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';

// A role file names chat's flags; a negated one may be written as typed (`no-fallbacks: true`) or as its setting (`fallbacks: false`).
let t: InProcessEnv;
beforeAll(async () => {
  t = await startInProcessEnv();
  mkdirSync(join(t.dir, 'config', 'roles'), { recursive: true });
});
afterAll(() => t.close());

function role(name: string, frontMatter: string): void {
  writeFileSync(join(t.dir, 'config', 'roles', `${name}.md`), `---\nmodel: local/echo\n${frontMatter}\n---\nBe terse.\n`);
}

async function provider(args: string[]): Promise<unknown> {
  const r = await t.run(['chat', '--dry-run', ...args, 'hi']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).provider;
}

describe('a role that turns fallbacks off', () => {
  it.each([
    ['no-fallbacks: true', { allow_fallbacks: false }],
    ['no_fallbacks: true', { allow_fallbacks: false }],
    ['fallbacks: false', { allow_fallbacks: false }],
    ['no-fallbacks: false', undefined],
    ['fallbacks: true', undefined],
  ])('%s', async (setting, expected) => {
    const name = `r${setting.replace(/\W+/g, '-')}`;
    role(name, setting);
    expect(await provider(['--role', name])).toEqual(expected);
  });

  it('what roles save --no-fallbacks writes reads back the same', async () => {
    const saved = await t.run(['roles', 'save', 'saved-nf', '--system', 'x', '--model', 'local/echo', '--no-fallbacks']);
    expect(saved.code, saved.stderr).toBe(0);
    expect(await provider(['--role', 'saved-nf'])).toEqual({ allow_fallbacks: false });
  });
});

describe('roles save takes every flag a role file may hold', () => {
  it('--no-stream and --usage are saved, and chat --role applies them', async () => {
    const saved = await t.run(['roles', 'save', 'whole', '--system', 'x', '--model', 'local/echo', '--no-stream', '--usage']);
    expect(saved.code, saved.stderr).toBe(0);
    const body = JSON.parse((await t.run(['chat', '--dry-run', '--role', 'whole', 'hi'])).stdout);
    expect(body.stream).toBeUndefined();
    const r = await t.run(['chat', '--role', 'whole', 'hi']);
    expect(r).toMatchObject({ code: 0, stdout: 'hi\n', stderr: expect.stringMatching(/^usage: \d+ prompt \+ \d+ completion/) });
    // The command line still wins over the role.
    expect(JSON.parse((await t.run(['chat', '--dry-run', '--role', 'whole', '--stream', 'hi'])).stdout).stream).toBe(true);
  });
});
