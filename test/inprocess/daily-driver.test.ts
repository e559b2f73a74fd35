import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';
import { emulatorUsers, type User } from '../support/users.js';

// Issue 34: what a user of llm, aichat, mods or gh reached for. Each run gets its own state folder.
const users = emulatorUsers('router-daily-');
const user = (): User => users.user();

describe('chat -c and conversations list', () => {
  it('chat -c with no conversation yet starts one, and the next -c continues it', async () => {
    const u = user();
    const first = await u.run(['chat', '-c', '--model', 'local/echo', 'first']);
    expect(first).toMatchObject({ code: 0, stdout: 'first\n' });
    await u.run(['chat', '-c', '--model', 'local/echo', 'second']);
    const list = await u.run(['conversations', 'list']);
    expect(list.stdout.trim().split('\n')).toHaveLength(1);
    expect(list.stdout).toMatch(/\t2\tlocal\/echo\tfirst$/m);
  });

  it('conversations list --limit N and a search word', async () => {
    const u = user();
    for (const p of ['rivers of france', 'mountains', 'rivers of spain']) await u.run(['chat', '--model', 'local/echo', p]);
    const rivers = await u.run(['conversations', 'list', 'RIVERS']);
    expect(rivers.stdout.trim().split('\n').map((l) => l.split('\t').at(-1))).toEqual(['rivers of spain', 'rivers of france']);
    const one = await u.run(['conversations', 'list', '--limit', '1', 'rivers', 'france']);
    expect(one.stdout.trim().split('\n').map((l) => l.split('\t').at(-1))).toEqual(['rivers of france']);
    expect((await u.run(['conversations', 'list', '--limit', '0'])).code).toBe(2);
    const none = await u.run(['conversations', 'list', 'volcano']);
    expect(none).toMatchObject({ code: 0, stdout: '' });
  });
});

describe('rough edges', () => {
  it('chat --help says how stdin and the arguments combine, and "-" puts stdin at its place', async () => {
    const help = await runInProcess(['chat', '--help']);
    expect(help.stdout).not.toMatch(/stdin when there are none/);
    expect(help.stdout).toMatch(/"-" puts stdin at its place/);
    const u = user();
    const sentFor = async (args: string[]) => {
      const from = users.emu.requestLog.length;
      const r = await u.run(['chat', '--model', 'local/echo', ...args], { input: 'MID\n' });
      expect(r.code, r.stderr).toBe(0);
      return (users.emu.requestLog.slice(from).find((e) => e.path.endsWith('/chat/completions'))!.body as { messages: { content: string }[] }).messages.at(-1)!.content;
    };
    expect(await sentFor(['before', '-', 'after'])).toBe('before\n\nMID\n\nafter');
    expect(await sentFor(['-', 'before', 'after'])).toBe('MID\n\nbefore after');
    expect(await sentFor(['before', 'after', '-'])).toBe('before after\n\nMID');
    // Without "-", a piped stdin comes first, as in llm and mods.
    expect(await sentFor(['before', 'after'])).toBe('MID\n\nbefore after');
    const twice = await u.run(['chat', '--model', 'local/echo', '-', 'and', '-'], { input: 'MID\n' });
    expect(twice).toMatchObject({ code: 2, stderr: 'error: - (the prompt) may stand once among the arguments: stdin can be read once\n' });
  });

  it('the usage ledger records the model that answered when none was given', async () => {
    const u = user();
    expect((await u.run(['chat', 'hi'])).code).toBe(0);
    expect((await u.run(['chat', '--no-stream', 'hi'])).code).toBe(0);
    const records = readFileSync(join(u.home, 'state', 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    for (const r of records) expect(r.model).toMatch(/\w/);
    const byModel = await u.run(['usage', '--by', 'model']);
    expect(byModel.stdout).not.toMatch(/^-\t/m);
  });

  it('a chat\'s ledger line holds the id of its answer, as the other commands\' do (streamed or not, each round of a tool loop)', async () => {
    const u = user();
    const tools = join(u.home, 'tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } }, command: 'echo sunny' }]));
    for (const args of [['chat', '--model', 'local/echo', 'hi'], ['chat', '--model', 'local/echo', '--no-stream', 'hi'], ['chat', '--model', 'local/tools', '--tools', tools, 'weather']]) {
      expect((await u.run(args)).code, args.join(' ')).toBe(0);
    }
    const records = readFileSync(join(u.home, 'state', 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id?: string });
    expect(records).toHaveLength(4);
    for (const r of records) expect(r.id).toMatch(/^gen-/);
    expect(new Set(records.map((r) => r.id)).size).toBe(4);
  });

  it('did-you-mean only when close: unrelated flags and commands get no guess', async () => {
    // --image is another tool's name for -a/--attach (test/inprocess/newcomer-edges.test.ts), never --usage.
    expect((await runInProcess(['chat', '--image', 'x'])).stderr).not.toContain('--usage');
    for (const [args, bad] of [[['chat', '--schema', 'x'], '--stream'], [['chat', '--role', 'x'], '--profile'], [['history'], 'login']] as const) {
      const r = await runInProcess([...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).not.toContain(bad);
      expect(r.stderr).not.toMatch(/did you mean/);
    }
    expect((await runInProcess(['chat', '--modle', 'x'])).stderr).toMatch(/did you mean --model\?/);
    expect((await runInProcess(['chat', '--temprature', '1', 'x'])).stderr).toMatch(/did you mean --temperature\?/);
  });

  it('a refusal names the flag the user typed, not the wire field', async () => {
    const u = user();
    const r = await u.run(['chat', '--max-tokens', '999999', '--model', 'local/echo', 'hi']);
    expect(r.code).toBe(2);
    // The line names the request (POST /api/v1/chat/completions: 400 …), then the flag as typed.
    expect(r.stderr).toMatch(/^error: POST \S+: 400 Bad Request: --max-tokens \(999999\) exceeds/);
    expect(r.stderr).not.toMatch(/max_completion_tokens/);
    const responses = await u.run(['responses', '--max-output-tokens', '999999', '--model', 'local/echo', 'hi']);
    expect(responses.stderr).toMatch(/^error: POST \S+: 400 Bad Request: --max-output-tokens \(999999\) exceeds/);
    // router api: the user typed the field, and reads it back.
    const api = await u.run(['api', '/v1/chat/completions', '-F', 'model=local/echo', '-F', 'max_completion_tokens=999999', '-F', 'messages[][role]=user', '-F', 'messages[][content]=hi']);
    expect(api.stderr).toMatch(/max_completion_tokens \(999999\)/);
  });
});

describe('roles', () => {
  it('save, list, show, path, delete; chat --role applies model, settings and system; flags win', async () => {
    const u = user();
    expect((await u.run(['roles', 'save', 'terse', '--system', 'Answer in one line.', '--model', 'local/echo', '--temperature', '0.3', '--stop', 'END', '--stop', 'X'])).code).toBe(0);
    const list = await u.run(['roles', 'list']);
    expect(list.stdout).toBe('terse\tlocal/echo\tAnswer in one line.\n');
    const path = (await u.run(['roles', 'path', 'terse'])).stdout.trim();
    expect(path).toBe(join(u.home, 'config', 'roles', 'terse.md'));
    expect(readFileSync(path, 'utf8')).toMatch(/^---\nmodel: local\/echo\ntemperature: 0.3\nstop:\n {2}- END\n {2}- X\n---\nAnswer in one line.\n$/);
    const before = users.emu.requestLog.length;
    expect(await u.run(['chat', '--role', 'terse', 'hello'])).toMatchObject({ code: 0, stdout: 'hello\n' });
    expect(await u.run(['chat', '--role', 'terse', '--temperature', '1.5', '-s', 'mine', 'hello'])).toMatchObject({ code: 0 });
    const [a, b] = users.emu.requestLog.slice(before).filter((e) => e.path.endsWith('/chat/completions')).map((e) => (e as { body: any }).body);
    expect(a).toMatchObject({ model: 'local/echo', temperature: 0.3, stop: ['END', 'X'], messages: [{ role: 'system', content: 'Answer in one line.' }, { role: 'user', content: 'hello' }] });
    expect(b).toMatchObject({ model: 'local/echo', temperature: 1.5, messages: [{ role: 'system', content: 'mine' }, { role: 'user', content: 'hello' }] });
    const r = await u.run(['responses', '--role', 'terse', '--no-stream', '--json', 'hi']);
    expect(r.code).toBe(0);
    const sent = users.emu.requestLog.at(-1) as { body: any };
    expect(sent.body).toMatchObject({ model: 'local/echo', temperature: 0.3, instructions: 'Answer in one line.' });
    // A chat flag (--stop) that responses has not is left out, not an error.
    expect(sent.body.stop).toBeUndefined();
    expect((await u.run(['roles', 'delete', 'terse'])).code).toBe(0);
    expect((await u.run(['roles', 'list'])).stdout).toBe('');
  });

  it('an unknown role is exit 2 naming the roles there are, with nothing sent', async () => {
    const u = user();
    const none = await u.run(['chat', '--role', 'nope', 'hi']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no role "nope": there are no roles yet/);
    await u.run(['roles', 'save', 'a', '--system', 'x']);
    await u.run(['roles', 'save', 'b', '--system', 'y']);
    const before = users.emu.requestLog.length;
    const r = await u.run(['chat', '--role', 'c', 'hi']);
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'error: no role "c"; the roles are: a, b\n' });
    expect(users.emu.requestLog.length).toBe(before);
  });

  it('a role file that does not parse, or holds a bad value, is one line naming the file and the position', async () => {
    const u = user();
    await u.run(['roles', 'save', 'x', '--system', 'x']);
    const dir = (await u.run(['roles', 'path'])).stdout.trim();
    // One that does not parse is a damaged file router keeps (exit 1, cli21); a bad value in one that does, bad input (exit 2).
    const cases: [string, RegExp, number][] = [
      ['---\nmodel: local/echo\ntemperature: [1\n---\nhi\n', /bad\.md is damaged \(line \d+, column \d+: /, 1],
      ['---\nmodel: a\nmodel: b\n---\nhi\n', /bad\.md is damaged \(line 3, column 1: Map keys must be unique\): router roles edit bad mends it, or move it away$/, 1],
      ['---\ntemperature: 5\n---\nhi\n', /bad\.md: temperature: "5" must be between 0 and 2$/, 2],
      ['---\nimage: cat.png\n---\nhi\n', /bad\.md: "image" is not a flag of router chat$/, 2],
      ['---\nmodel: local/echo\nhi\n', /bad\.md is damaged \(line 1: the front matter opened by "---" is never closed/, 1],
    ];
    for (const [text, message, code] of cases) {
      writeFileSync(join(dir, 'bad.md'), text);
      const r = await u.run(['chat', '--role', 'bad', 'hi']);
      expect(r.code).toBe(code);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr.trim()).toMatch(message);
    }
  });
});

describe('Markdown on a terminal', () => {
  const md = '# Rivers\n\nThe **Danube** and the `Rhine`.\n\n| river | km |\n|---|--:|\n| Danube | 2850 |';
  const tty = { stdout: true, stderr: true };
  const run = (u: ReturnType<typeof user>, args: string[], o: InProcessOptions = {}) => u.run(args, { tty, env: { NO_COLOR: '1' }, ...o });

  it('chat on a terminal renders the answer; piped, --raw and --json print it exactly as received', async () => {
    const u = user();
    const shown = await run(u, ['chat', '--model', 'local/echo', md]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toBe('# Rivers\n\nThe Danube and the Rhine.\n\nriver  │   km\n───────┼─────\nDanube │ 2850\n');
    const rawTty = await run(u, ['chat', '--raw', '--model', 'local/echo', md]);
    expect(rawTty.stdout).toBe(`${md}\n`);
    const piped = await u.run(['chat', '--model', 'local/echo', md]);
    expect(piped.stdout).toBe(`${md}\n`);
    const json = await run(u, ['chat', '--json', '--no-stream', '--model', 'local/echo', md]);
    expect(JSON.parse(json.stdout).choices[0].message.content).toBe(md);
    const whole = await run(u, ['chat', '--no-stream', '--model', 'local/echo', md]);
    expect(whole.stdout).toBe(shown.stdout);
    const colored = await u.run(['chat', '--model', 'local/echo', 'some **bold** text'], { tty });
    expect(colored.stdout).toBe('some \x1b[1mbold\x1b[0m text\n');
    expect(whole.stdout).toBe(shown.stdout);
  });

  it('responses renders on a terminal too, and --raw keeps the text', async () => {
    const u = user();
    const shown = await run(u, ['responses', '--model', 'local/echo', 'some **bold** text']);
    expect(shown).toMatchObject({ code: 0, stdout: 'some bold text\n' });
    const raw = await run(u, ['responses', '--raw', '--model', 'local/echo', 'some **bold** text']);
    expect(raw.stdout).toBe('some **bold** text\n');
  });

  it('a terminal that reports 0 columns is taken as 80 wide (tables no longer collapse)', async () => {
    const u = user();
    const r = await run(u, ['chat', '--model', 'local/echo', 'word '.repeat(30).trim()], { columns: 0 });
    expect(r.stdout.split('\n')[0]!.length).toBeGreaterThan(60);
    expect(r.stdout.split('\n')[0]!.length).toBeLessThanOrEqual(80);
    const file = join(u.home, 'r.jsonl');
    writeFileSync(file, JSON.stringify({ custom_id: 'a', body: { model: 'local/echo', messages: [{ role: 'user', content: 'x' }] } }));
    expect((await u.run(['batch', 'create', file])).code).toBe(0);
    const list = await run(u, ['batch', 'list'], { columns: 0 });
    expect(list.stdout.split('\n')[0]).toMatch(/^id\s+status\s+/);
  });
});

describe('rough edges, continued', () => {
  it('router api takes a path without its leading slash, as gh does; a URL is refused', async () => {
    const u = user();
    const r = await u.run(['api', 'v1/models']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).data.length).toBeGreaterThan(0);
    const url = await u.run(['api', 'https://example.com/v1/models']);
    expect(url).toMatchObject({ code: 2, stdout: '' });
    expect(url.stderr).toMatch(/not a URL/);
  });

  it('router help batch run prints the help of batch run', async () => {
    const r = await runInProcess(['help', 'batch', 'run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: router batch run /);
  });

  it('config list prints tab-separated lines when piped, as the other lists do', async () => {
    const u = user();
    await u.run(['config', 'set', 'model', 'local/echo']);
    const r = await u.run(['config', 'list']);
    expect(r.stdout).toBe('*\tdefault\t\t\tlocal/echo\n');
  });

  it('"@FILE" reads -s (and --instructions) from a file, as router api -F does; "@@" is a leading @', async () => {
    const u = user();
    const file = join(users.dir, 'system.txt');
    writeFileSync(file, 'You are terse.\n');
    const before = users.emu.requestLog.length;
    expect((await u.run(['chat', '--model', 'local/echo', '-s', `@${file}`, 'hi'])).code).toBe(0);
    expect((await u.run(['chat', '--model', 'local/echo', '-s', '@@channel', 'hi'])).code).toBe(0);
    expect((await u.run(['responses', '--model', 'local/echo', '--instructions', `@${file}`, 'hi'])).code).toBe(0);
    const bodies = users.emu.requestLog.slice(before).map((e) => (e as { body: any }).body);
    expect(bodies[0].messages[0]).toEqual({ role: 'system', content: 'You are terse.\n' });
    expect(bodies[1].messages[0]).toEqual({ role: 'system', content: '@channel' });
    expect(bodies[2].instructions).toBe('You are terse.\n');
    const missing = await u.run(['chat', '--model', 'local/echo', '-s', '@/nonexistent/x', 'hi']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: --system \/nonexistent\/x\S*: cannot read it/);
  });
});

describe('--json FIELDS of the new lists', () => {
  it('roles list --json name,model; conversations list --json with a search word after it', async () => {
    const u = user();
    await u.run(['roles', 'save', 'terse', '--system', 'Be brief.', '--model', 'local/echo']);
    expect(JSON.parse((await u.run(['roles', 'list', '--json', 'name,model'])).stdout)).toEqual([{ name: 'terse', model: 'local/echo' }]);
    await u.run(['chat', '--model', 'local/echo', 'otters']);
    await u.run(['chat', '--model', 'local/echo', 'beavers']);
    const found = JSON.parse((await u.run(['conversations', 'list', '--json', 'title', 'otters'])).stdout);
    expect(found).toEqual([{ title: 'otters' }]);
  });
});

describe('roles edit, a broken role in the list, completion of role names', () => {
  it('roles edit opens $EDITOR on the file (a new one from a template) and checks it after', async () => {
    const u = user();
    const editor = join(u.home, 'editor.sh');
    mkdirSync(u.home, { recursive: true });
    writeFileSync(editor, '#!/bin/sh\nprintf -- "---\\nmodel: local/echo\\n---\\nYou are a poet.\\n" > "$1"\n');
    chmodSync(editor, 0o755);
    const r = await u.run(['roles', 'edit', 'poet'], { env: { EDITOR: editor, VISUAL: '' } });
    expect(r.code).toBe(0);
    expect((await u.run(['roles', 'list'])).stdout).toBe('poet\tlocal/echo\tYou are a poet.\n');
    writeFileSync(editor, '#!/bin/sh\nprintf -- "---\\ntemperature: [\\n---\\nx\\n" > "$1"\n');
    const bad = await u.run(['roles', 'edit', 'poet'], { env: { EDITOR: editor, VISUAL: '' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: role file .*poet\.md: line \d+, column \d+: /);
    const failing = await u.run(['roles', 'edit', 'poet'], { env: { EDITOR: 'false', VISUAL: '' } });
    expect(failing.code).toBe(1);
    expect(failing.stderr).toMatch(/the editor false \(from \$EDITOR\) exited with 1/);
  });

  it('roles list shows the good roles and warns about a broken one; role names complete', async () => {
    const u = user();
    await u.run(['roles', 'save', 'good', '--system', 'fine']);
    writeFileSync(join((await u.run(['roles', 'path'])).stdout.trim(), 'broken.md'), '---\nmodel: [\n---\nx\n');
    const r = await u.run(['roles', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('good\t\tfine\n');
    expect(r.stderr).toMatch(/^warning: \S*broken\.md is damaged and left out \(line 3, column 1: .*; router roles edit broken mends it\)\n$/);
    expect((await u.run(['__complete', 'roles'])).stdout).toBe('broken\ngood\n');
  });
});
