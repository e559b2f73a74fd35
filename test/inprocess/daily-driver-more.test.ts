import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emulatorUsers, type User } from '../support/users.js';

// Issue 34, tried again as a new user: roles, REPL, conversations. Each run gets its own folders.
const users = emulatorUsers('router-daily-more-');
const user = (): User => users.user();

const TOOLS = [{ type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }, command: 'echo sunny' }];

describe('roles with files: --tools and --schema', () => {
  it('roles save keeps a relative --tools or --schema path as absolute: the role works from any folder', async () => {
    const u = user();
    writeFileSync(join(u.home, 'tools.json'), JSON.stringify(TOOLS));
    writeFileSync(join(u.home, 'city.json'), JSON.stringify({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }));
    // Relative to the folder the command runs in (this process's).
    const rel = (name: string) => relative(process.cwd(), join(u.home, name));
    expect((await u.run(['roles', 'save', 'weather', '--system', 'You tell the weather.', '--model', 'local/tools', '--tools', rel('tools.json')])).code).toBe(0);
    expect((await u.run(['roles', 'save', 'city', '--system', 'Name a city.', '--model', 'local/lorem', '--schema', rel('city.json')])).code).toBe(0);
    const file = readFileSync(join(u.home, 'config', 'roles', 'weather.md'), 'utf8');
    expect(file).toContain(`tools: ${join(u.home, 'tools.json')}`);
    const weather = await u.run(['chat', '--role', 'weather', 'What is the weather in Paris?']);
    expect(weather.stderr).toBe('');
    expect(weather.stdout).toContain('sunny');
    const city = await u.run(['chat', '--role', 'city', 'a city']);
    expect(city.code).toBe(0);
    expect(Object.keys(JSON.parse(city.stdout))).toEqual(['city']);
    // One tools file serves both commands (issue 44): responses runs the role's tools as chat does.
    const responses = await u.run(['responses', '--role', 'weather', 'weather in Paris']);
    expect(responses.stderr).toBe('');
    expect(responses.stdout).toContain('sunny');
  });

  it('a role file written by hand: a relative path is taken from the roles folder; a schema may be YAML', async () => {
    const u = user();
    const roles = join(u.home, 'config', 'roles');
    mkdirSync(roles, { recursive: true });
    writeFileSync(join(roles, 'tools.json'), JSON.stringify(TOOLS));
    writeFileSync(join(roles, 'weather.md'), '---\nmodel: local/tools\ntools: tools.json\n---\nYou tell the weather.\n');
    writeFileSync(join(roles, 'city.md'), '---\nmodel: local/lorem\nschema:\n  type: object\n  properties:\n    city: {type: string}\n  required: [city]\n---\nName a city.\n');
    const weather = await u.run(['chat', '--role', 'weather', 'What is the weather in Paris?']);
    expect(weather.stderr).toBe('');
    expect(weather.stdout).toContain('sunny');
    const city = await u.run(['chat', '--role', 'city', 'a city']);
    expect(city.stderr).toBe('');
    expect(Object.keys(JSON.parse(city.stdout))).toEqual(['city']);
  });
});

describe('roles edit when the editor fails, is missing, or the edit does not parse', () => {
  const editorWriting = (u: { home: string }, text: string) => {
    const editor = join(u.home, `editor-${text.length}.sh`);
    writeFileSync(editor, `#!/bin/sh\ncp "$0.text" "$1"\n`, { mode: 0o755 });
    writeFileSync(`${editor}.text`, text);
    return { EDITOR: editor, VISUAL: '' };
  };

  it('an editor that fails makes no role; with no editor named, off a terminal, vi is not tried', async () => {
    const u = user();
    const failing = await u.run(['roles', 'edit', 'poet'], { env: { EDITOR: 'false', VISUAL: '' } });
    expect(failing.code).toBe(1);
    expect(failing.stderr).toBe('error: the editor false (from $EDITOR) exited with 1; role poet is not made\n');
    const none = await u.run(['roles', 'edit', 'poet'], { env: { EDITOR: '', VISUAL: '' } });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^error: no editor: set \$VISUAL or \$EDITOR/);
    expect((await u.run(['roles', 'list', '--json'])).stdout).toBe('[]\n');
    expect((await u.run(['chat', '--role', 'poet', 'hi', '--model', 'local/echo'])).code).toBe(2);
  });

  it('an edit that does not parse leaves the role as it was, and the next edit starts from it', async () => {
    const u = user();
    await u.run(['roles', 'save', 'poet', '--system', 'You are a poet.', '--model', 'local/echo']);
    const before = readFileSync(join(u.home, 'config', 'roles', 'poet.md'), 'utf8');
    const bad = await u.run(['roles', 'edit', 'poet'], { env: editorWriting(u, '---\nmodel: [\n---\nYou are a bard.\n') });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: role file .*poet\.md: line \d+, column \d+: .*role poet is unchanged; the edit is kept in /);
    expect(readFileSync(join(u.home, 'config', 'roles', 'poet.md'), 'utf8')).toBe(before);
    expect((await u.run(['roles', 'list'])).stdout).toBe('poet\tlocal/echo\tYou are a poet.\n');
    // The next edit opens the kept one: an editor that only shows it back (true) meets the same mistake.
    const again = await u.run(['roles', 'edit', 'poet'], { env: { EDITOR: 'true', VISUAL: '' } });
    expect(again.code).toBe(2);
    const fixed = await u.run(['roles', 'edit', 'poet'], { env: editorWriting(u, '---\nmodel: local/lorem\n---\nYou are a bard.\n') });
    expect(fixed.code).toBe(0);
    expect((await u.run(['roles', 'list'])).stdout).toBe('poet\tlocal/lorem\tYou are a bard.\n');
    // A role deleted takes a kept edit with it.
    await u.run(['roles', 'edit', 'poet'], { env: editorWriting(u, '---\nmodel: [\n---\nx\n') });
    expect((await u.run(['roles', 'delete', 'poet'])).code).toBe(0);
    expect(readdirSync(join(u.home, 'config', 'roles'))).toEqual([]);
  });
  it('an edit is checked as chat --role reads it: a key that is no flag, a bad value or a missing file keeps the role as it was', async () => {
    const u = user();
    await u.run(['roles', 'save', 'poet', '--system', 'You are a poet.', '--model', 'local/echo']);
    const roleFile = join(u.home, 'config', 'roles', 'poet.md');
    const before = readFileSync(roleFile, 'utf8');
    const cases: [string, RegExp][] = [
      ['---\ntemprature: 0.2\n---\nYou are a bard.\n', /^error: role file .*poet\.md: "temprature" is not a flag of router chat \(role poet is unchanged; the edit is kept in /],
      ['---\ntemperature: hot\n---\nYou are a bard.\n', /^error: role file .*poet\.md: temperature: "hot" .*\(role poet is unchanged; the edit is kept in /],
      ['---\ntools: missing-tools.json\n---\nYou are a bard.\n', /^error: .*missing-tools\.json.*\(role poet is unchanged; the edit is kept in /],
    ];
    for (const [text, message] of cases) {
      const r = await u.run(['roles', 'edit', 'poet'], { env: editorWriting(u, text) });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.split('\n')).toHaveLength(2);
      expect(readFileSync(roleFile, 'utf8')).toBe(before);
    }
    // A file named relative to the roles folder is where chat --role will look for it.
    writeFileSync(join(u.home, 'config', 'roles', 'tools.json'), JSON.stringify(TOOLS));
    const fixed = await u.run(['roles', 'edit', 'poet'], { env: editorWriting(u, '---\nmodel: local/tools\ntemperature: 0.2\ntools: tools.json\n---\nYou tell the weather.\n') });
    expect(fixed.stderr).toBe('');
    expect(fixed.code).toBe(0);
    const weather = await u.run(['chat', '--role', 'poet', 'What is the weather in Paris?']);
    expect(weather.stdout).toContain('sunny');
  });
});

describe('a role that does not exist', () => {
  it('asked about by a roles command is not found (exit 5), as conversations show and config use; named by --role, a usage error (2)', async () => {
    const u = user();
    expect((await u.run(['roles', 'save', 'kept', '--system', 'You are kept.'])).code).toBe(0);
    for (const args of [['roles', 'show', 'nope'], ['roles', 'delete', 'nope'], ['conversations', 'show', 'nope'], ['config', 'use', 'nope']]) {
      const r = await u.run(args);
      expect(r.code, args.join(' ')).toBe(5);
      expect(r.stderr, args.join(' ')).toMatch(/^error: no (role|conversation|profile) "?nope"?[;: (]/);
    }
    expect(await u.run(['roles', 'show', 'nope'])).toMatchObject({ stderr: 'error: no role "nope"; the roles are: kept\n' });
    for (const args of [['chat', '--role', 'nope', 'hi'], ['--profile', 'nope', 'chat', 'hi']]) expect((await u.run(args)).code, args.join(' ')).toBe(2);
  });
});

describe('roles save, what it writes', () => {
  it('a prompt that starts with a "---" line is kept as the prompt, not read as front matter', async () => {
    const u = user();
    const prompt = '---\nYou are a YAML expert.\n---\nBe brief.';
    expect((await u.run(['roles', 'save', 'dash', '--system', prompt])).code).toBe(0);
    expect((await u.run(['roles', 'show', 'dash', '--json', 'system'])).stdout).toBe(`${JSON.stringify({ system: prompt })}\n`);
    const r = await u.run(['chat', '--role', 'dash', '--model', 'local/echo', '--dry-run', 'hi']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).messages[0]).toEqual({ role: 'system', content: prompt });
  });
});

describe('role files as found', () => {
  it('roles list: one line per role, a tab or an escape sequence of a prompt shown escaped; roles show too, on a terminal', async () => {
    const u = user();
    const roles = join(u.home, 'config', 'roles');
    mkdirSync(roles, { recursive: true });
    writeFileSync(join(roles, 'odd.md'), '---\nmodel: local/echo\n---\nName\tAge \x1b[2J\rcleared\n');
    expect((await u.run(['roles', 'list'])).stdout).toBe('odd\tlocal/echo\tName\\tAge \\u001b[2J\\rcleared\n');
    const file = '---\nmodel: local/echo\n---\nName\tAge \x1b[2J\rcleared\n';
    expect((await u.run(['roles', 'show', 'odd'], { tty: { stdout: true } })).stdout).toBe(file.replace('\x1b', '\\u001b').replace('\r', '\\r'));
    expect((await u.run(['roles', 'show', 'odd'])).stdout).toBe(file);
  });

  it('a setting of keys whose value is not a text or a number is refused, naming the file; nothing sent', async () => {
    const u = user();
    const roles = join(u.home, 'config', 'roles');
    mkdirSync(roles, { recursive: true });
    writeFileSync(join(roles, 'meta.md'), '---\nmetadata:\n  team:\n    name: core\n---\nYou are terse.\n');
    const r = await u.run(['chat', '--role', 'meta', 'hi', '--model', 'local/echo']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: role file ${join(roles, 'meta.md')}: metadata: each key takes a text or a number\n`);
  });

  it('a role file that is not UTF-8 is refused naming the file, as any text file is; nothing sent', async () => {
    const u = user();
    const roles = join(u.home, 'config', 'roles');
    mkdirSync(roles, { recursive: true });
    writeFileSync(join(roles, 'utf16.md'), Buffer.from('\ufeffYou are terse.\n', 'utf16le'));
    const r = await u.run(['chat', '--role', 'utf16', 'hi', '--model', 'local/echo']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: role file ${join(roles, 'utf16.md')} is not UTF-8 text (it is UTF-16: convert it with iconv -f UTF-16 -t UTF-8)\n`);
  });
});

describe('chat -c after conversations delete', () => {
  it('the last conversation deleted: -c takes up the most recent one left, or starts one', async () => {
    const u = user();
    await u.run(['chat', '--conversation', 'older', '--model', 'local/echo', 'one']);
    await u.run(['chat', '--conversation', 'newer', '--model', 'local/echo', 'two']);
    expect((await u.run(['conversations', 'delete', 'newer'])).code).toBe(0);
    const r = await u.run(['chat', '-c', 'three']);
    expect(r).toMatchObject({ code: 0, stdout: 'three\n' });
    expect((await u.run(['conversations', 'show', 'older'])).stdout).toBe('user: one\n\nassistant: one\n\nuser: three\n\nassistant: three\n');
    expect((await u.run(['conversations', 'delete', 'older'])).code).toBe(0);
    const fresh = await u.run(['chat', '-c', '--model', 'local/echo', 'four']);
    expect(fresh).toMatchObject({ code: 0, stdout: 'four\n' });
    expect((await u.run(['conversations', 'list'])).stdout).toMatch(/^c_\d{8}_\w+\t.*\t1\tlocal\/echo\tfour\n$/);
  });
});

describe('chat -i and the flags of one call', () => {
  const terminal = { stdin: true, stdout: true, stderr: true };
  it('a flag the REPL does not carry out is refused, not left unsaid; a role\'s is left out, and said', async () => {
    const u = user();
    writeFileSync(join(u.home, 'tools.json'), JSON.stringify(TOOLS));
    for (const [flags, named] of [
      [['--schema', '{"type":"object"}', '--json'], '--json, --schema apply'],
      [['--usage'], '--usage applies'],
    ] as const) {
      const r = await u.run(['--no-color', 'chat', '-i', '--model', 'local/tools', ...flags], { tty: terminal, input: '/exit\n' });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`error: ${named} to one call, not to chat -i\n`);
    }
    // --approve is carried out by the REPL (it asks before each tool a turn runs).
    expect(await u.run(['--no-color', 'chat', '-i', '--model', 'local/tools', '--tools', join(u.home, 'tools.json'), '--approve'], { tty: terminal, input: '/exit\n' })).toMatchObject({ code: 0 });
    await u.run(['roles', 'save', 'weather', '--system', 'You tell the weather.', '--model', 'local/tools', '--tools', join(u.home, 'tools.json')]);
    const role = await u.run(['chat', '-i', '--role', 'weather'], { tty: terminal, input: '/exit\n' });
    expect(role.code).toBe(0);
    expect(role.stderr).not.toContain('left out');
  });
});

describe('a value a role sets that a later check refuses', () => {
  it('names the role file, not a flag the user never typed', async () => {
    const u = user();
    const roles = join(u.home, 'config', 'roles');
    mkdirSync(roles, { recursive: true });
    writeFileSync(join(roles, 'stops.md'), '---\nstop: [a, b, c, d, e]\n---\nx\n');
    writeFileSync(join(roles, 'gone.md'), '---\nschema: gone.json\n---\nx\n');
    const stops = await u.run(['chat', '--role', 'stops', 'hi', '--model', 'local/echo']);
    expect(stops).toMatchObject({ code: 2, stdout: '', stderr: `error: role file ${join(roles, 'stops.md')}: stop may be given at most 4 times\n` });
    const gone = await u.run(['chat', '--role', 'gone', 'hi', '--model', 'local/echo']);
    expect(gone).toMatchObject({ code: 2, stdout: '', stderr: `error: role file ${join(roles, 'gone.md')}: schema ${join(roles, 'gone.json')}: cannot read it (no such file or folder)\n` });
    // Typed on the command line, the flag is named as before.
    const typed = await u.run(['chat', '--role', 'gone', '--schema', 'nope.json', 'hi', '--model', 'local/echo']);
    expect(typed.stderr).toBe('error: --schema nope.json: cannot read it (no such file or folder)\n');
  });
});
