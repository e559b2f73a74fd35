import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAttachment } from '../../src/kit/attachments.js';
import { readFragment } from '../../src/kit/fragment-sources.js';
import { startInProcessEnv } from '../support/inprocess-env.js';
import { startedForAll } from '../support/for-all.js';

// A file a user names that cannot be used is said one way, whichever reader met it (a flag's file,
// an attachment, a fragment, a role file): who named it, the file, what is wrong, in one line
// (internal/named-input.ts namedFileLine). Before: "--attach: cannot read PATH (is a folder)" beside
// "fragment PATH: is a folder: name a file in it (one fragment a file)" and "attachment PATH: cannot read it (…)".
const t = startedForAll(() => startInProcessEnv());
const at = (name: string) => join(t.dir, name);
const folder = () => {
  mkdirSync(at('a-folder'), { recursive: true });
  return at('a-folder');
};

describe('router, each reader of a named file', () => {
  const CASES: [string, () => string[], () => string][] = [
    ['--attach, no such file', () => ['chat', '-m', 'local/echo', '-a', at('none.png'), 'hi'], () => `--attach ${at('none.png')}: cannot read it (no such file or folder)`],
    ['--attach, a folder', () => ['chat', '-m', 'local/echo', '-a', folder(), 'hi'], () => `--attach ${folder()}: is a folder: name a file in it`],
    ['-f, no such file', () => ['chat', '-m', 'local/echo', '-f', at('none.txt'), 'hi'], () => `fragment ${at('none.txt')}: no file, URL, alias or hash of that name (router fragments list shows those kept)`],
    ['-f, a folder', () => ['chat', '-m', 'local/echo', '-f', folder(), 'hi'], () => `fragment ${folder()}: is a folder: name a file in it`],
    ['--schema, no such file', () => ['chat', '-m', 'local/echo', '--schema', at('none.json'), 'hi'], () => `--schema ${at('none.json')}: cannot read it (no such file or folder)`],
    ['--schema, a folder', () => ['chat', '-m', 'local/echo', '--schema', folder(), 'hi'], () => `--schema ${folder()}: is a folder: name a file in it`],
    ['--schema, a word that names no file', () => ['chat', '-m', 'local/echo', '--schema', 'dog', 'hi'], () => '--schema dog: cannot read it (no such file or folder); a schema of one text field is written "dog str"'],
    ['api --input, a folder', () => ['api', 'POST', '/v1/x', '--input', folder()], () => `--input ${folder()}: is a folder: name a file in it`],
    ['serve --providers, a folder', () => ['serve', '--providers', folder()], () => `--providers ${folder()}: is a folder: name a file in it`],
    ['api -F @file, no such file', () => ['api', 'POST', '/v1/x', '-F', `a=@${at('none')}`], () => `-F ${at('none')}: cannot read it (no such file or folder)`],
  ];
  it.each(CASES)('%s: one line, the file named, what is wrong; exit 2 (5: not found), nothing on stdout', async (name, args, said) => {
    const r = await t.run(args());
    // A fragment that names nothing is not found (exit 5, as a kept one asked by alias); the rest, usage.
    expect(r).toEqual({ code: name === '-f, no such file' ? 5 : 2, stdout: '', stderr: `error: ${said()}\n` });
  });

  it('a role file that is a folder', async () => {
    const roles = join(t.dir, 'config', 'roles');
    mkdirSync(join(roles, 'odd.md'), { recursive: true });
    const r = await t.run(['chat', '-m', 'local/echo', '--role', 'odd', 'hi'], { env: { ROUTER_CONFIG_DIR: join(t.dir, 'config') } });
    expect(r).toEqual({ code: 2, stdout: '', stderr: `error: role file ${join(roles, 'odd.md')}: is a folder: name a file in it\n` });
  });
});

// A requests file, and the files router keeps (config file, usage ledger, a config folder's aliases): the
// same rule, each by the name a user knows it by. Before: "cannot read PATH: …", "PATH is not a file (it is a folder)".
describe('router, a requests file or a file router keeps', () => {
  /** A folder made where `name` goes under a fresh folder of its own: [the folder it is in, the folder made]. */
  const folderAt = (where: string, name: string): [string, string] => {
    mkdirSync(join(at(where), name), { recursive: true });
    return [at(where), join(at(where), name)];
  };
  const CASES: [string, () => { args: string[]; env?: Record<string, string>; said: string }][] = [
    ['batch create, no such file', () => ({ args: ['batch', 'create', at('none.jsonl')], said: `requests file ${at('none.jsonl')}: cannot read it (no such file or folder)` })],
    ['batch create, a folder', () => ({ args: ['batch', 'create', folder()], said: `requests file ${folder()}: is a folder: name a file in it` })],
    ['batch run, a folder', () => ({ args: ['batch', 'run', folder(), '--model', 'local/echo'], said: `requests file ${folder()}: is a folder: name a file in it` })],
    ['config file, a folder', () => {
      const [dir, file] = folderAt('cfg-folder', 'config.json');
      return { args: ['config', 'list'], env: { ROUTER_CONFIG_DIR: dir }, said: `config file ${file}: is a folder: move it away` };
    }],
    ['config file, under a file', () => {
      writeFileSync(at('a-file'), 'x');
      return { args: ['chat', '-m', 'local/echo', 'hi'], env: { ROUTER_CONFIG_DIR: at('a-file') }, said: `config file ${at('a-file')}/config.json: cannot read it (a part of the path is not a folder)` };
    }],
    ['aliases file, a folder', () => {
      const [dir, file] = folderAt('alias-folder', 'aliases.json');
      return { args: ['aliases', 'list'], env: { ROUTER_CONFIG_DIR: dir }, said: `config file ${file}: is a folder: move it away` };
    }],
    ['usage ledger, a folder', () => {
      const [dir, file] = folderAt('ledger-folder', 'usage.jsonl');
      return { args: ['usage'], env: { ROUTER_STATE_DIR: dir }, said: `usage ledger ${file}: is a folder: move it away` };
    }],
  ];
  it.each(CASES)('%s: one line, the file named, what is wrong; exit 2 (1: a config folder’s file), nothing on stdout', async (name, made) => {
    const { args, env, said } = made();
    // The exit codes are each command's own, as before: a file of the config folder's is a kit error, exit 1.
    expect(await t.run(args, { env })).toEqual({ code: name.startsWith('aliases') ? 1 : 2, stdout: '', stderr: `error: ${said}\n` });
  });
});

describe('the library’s readers word theirs the same way', () => {
  it('readAttachment and readFragment of a folder', async () => {
    await expect(readAttachment(folder())).rejects.toMatchObject({ message: `attachment ${folder()}: is a folder: name a file in it` });
    const store = { find: () => undefined } as unknown as Parameters<typeof readFragment>[1];
    await expect(readFragment(folder(), store)).rejects.toMatchObject({ message: `fragment ${folder()}: is a folder: name a file in it` });
  });
});
