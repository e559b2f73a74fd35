import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';

// `roles save` reads and checks the files a role names as chat would: a role that cannot be used is not saved.
let t: InProcessEnv;
const path = (name: string) => join(t.dir, name);
beforeAll(async () => {
  t = await startInProcessEnv();
  writeFileSync(path('not-json.json'), '[{"type": "function"');
  writeFileSync(path('no-tools.json'), '[]');
  writeFileSync(path('tools.json'), JSON.stringify([{ type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } }, command: 'date' }]));
  writeFileSync(path('schema.json'), JSON.stringify({ type: 'object', properties: { a: { type: 'string' } } }));
  writeFileSync(path('empty.txt'), '');
  writeFileSync(path('note.txt'), 'a note');
  mkdirSync(path('images'));
});
afterAll(() => t.close());

const saved = async (name: string) => (await t.run(['roles', 'show', name])).code === 0;

describe('roles save checks the files it is given', () => {
  it.each([
    ['--tools, missing', () => ['--tools', path('missing.json')], /^error: --tools:? .*missing\.json/],
    ['--tools, not JSON', () => ['--tools', path('not-json.json')], /^error: --tools/],
    ['--tools, no tool', () => ['--tools', path('no-tools.json')], /^error: --tools must hold a JSON array of at least one tool/],
    ['--schema, missing', () => ['--schema', path('missing.json')], /^error: --schema:? .*missing\.json/],
    ['--schema, not JSON', () => ['--schema', path('not-json.json')], /^error: --schema/],
    ['--attach, missing', () => ['--attach', path('missing.png')], /^error: --attach:? .*missing\.png/],
    ['--attach, empty', () => ['--attach', path('empty.txt')], /^error: --attach .*the file is empty/],
    ['--save-images, missing folder', () => ['--save-images', path('no-such-dir')], /^error: --save-images/],
  ])('%s: exit 2, one line, no role', async (_, flags, said) => {
    const r = await t.run(['roles', 'save', 'broken', '--system', 'x', ...flags()]);
    expect(r.stderr).toMatch(said);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.code).toBe(2);
    expect(await saved('broken')).toBe(false);
  });

  it('good files: saved, and chat uses the role', async () => {
    const r = await t.run(['roles', 'save', 'good', '--system', 'x', '--tools', path('tools.json'), '--save-images', path('images')]);
    expect(r.code).toBe(0);
    expect(await saved('good')).toBe(true);
    const chat = await t.run(['chat', '--role', 'good', '-m', 'local/echo', 'hi']);
    expect(chat.stderr).toBe('');
    expect(chat.code).toBe(0);
    const withSchema = await t.run(['roles', 'save', 'shaped', '--system', 'x', '--schema', path('schema.json')]);
    expect(withSchema.code).toBe(0);
    const attached = await t.run(['roles', 'save', 'attached', '--system', 'x', '--attach', path('note.txt')]);
    expect(attached.code).toBe(0);
    expect(await saved('attached')).toBe(true);
  });
});
