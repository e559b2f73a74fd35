import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { testStreams } from '../support/inprocess.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { typedRepl } from '../support/typed-repl.js';

// The CLI's rough edges closing note 26 left (task cli21): each said in one line, in one style, nothing spent.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));
const sent = () => t.requests().filter((r) => r.method === 'POST');

describe('a lone "help" argument asks for help: refused, nothing sent; after -- it is sent', () => {
  it.each([
    [['chat', 'help', '--model', 'local/echo'], "router chat's prompt", 'router help chat'],
    [['responses', 'help', '--model', 'local/echo'], "router responses's prompt", 'router help responses'],
    [['speak', 'help', '--model', 'local/tts', '-o', 'x.mp3'], "router speak's text", 'router help speak'],
    [['embed', 'help', '--model', 'local/embed'], "router embed's texts", 'router help embed'],
    [['keys', 'create', 'help'], "router keys create's name", 'router help keys create'],
  ])('%j', async (args, taken, helpWith) => {
    const r = await run(args as string[]);
    // Was: chat sent "help" to the model (exit 0, an answer paid for); keys create made a key named "help".
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const path = `router ${(args as string[]).slice(0, (args as string[]).indexOf('help')).join(' ')}`;
    expect(r.stderr).toBe(`error: "help" alone would be taken as ${taken}: for help, ${helpWith} (or ${path} --help); to give the word itself, ${path} -- help; nothing was sent\n`);
    expect(sent()).toEqual([]);
  });

  it('router chat -- help sends the word; help with other words is a prompt as any', async () => {
    const r = await run(['chat', '--model', 'local/echo', '--', 'help']);
    expect(r).toMatchObject({ code: 0, stdout: 'help\n' });
    expect((await run(['chat', '--model', 'local/echo', 'help', 'me'])).stdout).toBe('help me\n');
    expect(sent().map((q) => q.body.messages.at(-1).content)).toEqual(['help', 'help me']);
    // Said in the command's help.
    expect((await run(['chat', '--help'])).stdout.replace(/\s+/g, ' ')).toContain('A lone "help" is refused, not sent: to send the word itself, router chat -- help.');
  });
});

describe('--mcp given a file that is no program says what the file is and what --mcp takes', () => {
  it('a JSONL file of batch requests, a text file; a script here that is not on PATH: its path', async () => {
    writeFileSync(join(t.dir, 'data.jsonl'), '{"custom_id":"a","body":{"messages":[]}}\n{"custom_id":"b","body":{"messages":[]}}\n');
    writeFileSync(join(t.dir, 'notes.txt'), 'some notes\n');
    writeFileSync(join(t.dir, 'server.py'), '#!/usr/bin/env python3\nprint(1)\n', { mode: 0o755 });
    const mcp = (what: string) => run(['chat', '--model', 'local/echo', '--mcp', what, 'hi'], {}).then((r) => r);
    const cwd = process.cwd();
    process.chdir(t.dir);
    try {
      const jsonl = await mcp('data.jsonl');
      // Was: "MCP server data.jsonl: could not start: the command was not found (install it, or give its full path)".
      expect(jsonl.code).toBe(12);
      expect(jsonl.stderr).toBe(`error: MCP server data.jsonl: could not start: it is a file of JSON lines (a batch's requests: router batch create data.jsonl), not a server: --mcp takes a server's command line (npx -y PACKAGE, ./server.py) or its URL\n`);
      expect((await mcp('notes.txt')).stderr).toBe(`error: MCP server notes.txt: could not start: it is a text file, not a server: --mcp takes a server's command line (npx -y PACKAGE, ./server.py) or its URL\n`);
      expect((await mcp('server.py')).stderr).toBe('error: MCP server server.py: could not start: server.py is a file here, not a command on PATH: give its path, --mcp ./server.py\n');
      // A name that is no file here keeps the shell's words.
      expect((await mcp('no-such-server')).stderr).toContain('the command was not found');
    } finally {
      process.chdir(cwd);
    }
    expect(sent()).toEqual([]);
  });
});

describe("commander's usage errors look as router's own on a terminal: error: in red", () => {
  it.each([[['chat', '--bogus']], [['batch', 'get']], [['help', 'chta']], [['chat', '-it\'s cold']], [['nosuch']]])('%j', async (args) => {
    const tty = testStreams({ tty: { stdout: true, stderr: true } });
    expect(await main(['node', 'router', ...args], tty.streams)).toBe(2);
    // Was: commander's plain "error:" beside router's red one.
    expect(tty.stderr()).toMatch(/^\x1b\[31merror:\x1b\[0m \S/);
    for (const plain of [testStreams({ tty: { stdout: true, stderr: true }, env: { NO_COLOR: '1' } }), testStreams()]) {
      expect(await main(['node', 'router', ...args], plain.streams)).toBe(2);
      expect(plain.stderr()).toMatch(/^error: \S/);
    }
    const noColor = testStreams({ tty: { stdout: true, stderr: true } });
    expect(await main(['node', 'router', '--no-color', ...args], noColor.streams)).toBe(2);
    expect(noColor.stderr()).toMatch(/^error: \S/);
  });
});

describe('chat -i quotes what was typed escaped and cut, as /tools quotes a description', () => {
  it('/model with a bidi control or 300 characters; /save of such a name', async () => {
    const env = { ...t.env, ROUTER_MODEL: 'local/echo', NO_COLOR: '1' };
    const long = 'z'.repeat(300);
    const saved = join(t.dir, 'saved-\u202egpj.json');
    const { code, stderr } = await typedRepl(env, ['/model ab\u202egpj.exe', `/model ${long}`, '/model local/\u202eecho', `/save ${saved}`, `/save ${saved}`]);
    expect(code).toBe(0);
    // Was: the typed U+202E reached the terminal (the rest of the line shown reversed), and 300 characters unbroken.
    expect(stderr).toContain('error: /model: ab\\u202egpj.exe must look like');
    expect(stderr).toContain(`error: /model: ${'z'.repeat(79)}… must look like`);
    expect(stderr).toMatch(/error: \/model: local\/\\u202eecho is not in the model list/);
    expect(stderr).toContain('saved-\\u202egpj.json');
    expect(stderr).toMatch(/error: \/save: \S*saved-\\u202egpj\.json exists/);
    const ours = stderr.split('\n').filter((l) => /^(error|model|saved)/.test(l));
    for (const line of ours) expect(line, line).not.toContain('\u202e');
  });
});

describe('serve --check-drift: a provider down is not a drift', () => {
  const cassette = (response: Record<string, unknown>) => ({
    provider: 'up',
    recorded_at: '2026-11-28T00:00:00.000Z',
    request: { method: 'POST', url: 'http://127.0.0.1:9/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: { model: 'm', messages: [{ role: 'user', content: JSON.stringify(response).slice(0, 20) }] } },
    response,
  });
  it('answered when recorded, down now: a down line, exit 8; down then and now: the same', async () => {
    const folder = join(t.dir, 'down-cassettes');
    mkdirSync(folder);
    const answered = { status: 200, headers: { 'content-type': 'application/json' }, body: { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] } };
    const refused = { status: 0, headers: {}, failure: { reason: 'refused', message: 'up: connection refused' } };
    writeFileSync(join(folder, 'up-m-0000000000aa.json'), JSON.stringify(cassette(answered)));
    writeFileSync(join(folder, 'up-m-0000000000bb.json'), JSON.stringify(cassette(refused)));
    const yaml = join(t.dir, 'down.yaml');
    writeFileSync(yaml, 'providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { t/m: m } }\n');
    const r = await run(['serve', '--providers', yaml, '--check-drift', folder]);
    // Was: exit 1 with "error" for both, as if they had drifted.
    expect(r.code).toBe(8);
    expect(r.stdout).toMatch(/^down {3}up-m-0000000000aa\.json: .*refused.*\nsame {3}up-m-0000000000bb\.json\n$/);
    expect(r.stderr).toBe('error: 1 of 2 recorded answers not asked again: the provider is down (refused or timed out); the other 1, the same shape\n');
    // With a drift besides, the drift decides: exit 1 (`other`, the emulator asked with no key, answers 401 now).
    writeFileSync(join(folder, 'other-m-0000000000cc.json'), JSON.stringify({ ...cassette(answered), provider: 'other' }));
    writeFileSync(yaml, `providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { t/m: m } }\n  - { name: other, base_url: "${t.apiRoot}", models: { t/o: m } }\n`);
    const both = await run(['serve', '--providers', yaml, '--check-drift', folder]);
    expect(both.stdout).toContain('drift  other-m-0000000000cc.json\n  - status: 200\n');
    expect(both.code).toBe(1);
    expect(both.stderr).toBe('error: 1 of 3 recorded answers changed shape or could not be asked again; 1 not asked: the provider is down (refused or timed out)\n');
  });

  it('every recorded answer down now: said as none checked, not as "the others, the same shape"', async () => {
    const folder = join(t.dir, 'all-down-cassettes');
    mkdirSync(folder);
    const answered = { status: 200, headers: { 'content-type': 'application/json' }, body: { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] } };
    const yaml = join(t.dir, 'all-down.yaml');
    writeFileSync(yaml, 'providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { t/m: m } }\n');
    writeFileSync(join(folder, 'up-m-0000000000aa.json'), JSON.stringify(cassette(answered)));
    const one = await run(['serve', '--providers', yaml, '--check-drift', folder]);
    // Was: "1 of 1 recorded answers not asked again: …; the others, the same shape".
    expect(one).toMatchObject({ code: 8, stderr: 'error: 1 of 1 recorded answer not asked again: the provider is down (refused or timed out): none was checked\n' });
    writeFileSync(join(folder, 'up-m-0000000000dd.json'), JSON.stringify({ ...cassette(answered), request: { ...cassette(answered).request, body: { model: 'm', messages: [{ role: 'user', content: 'two' }] } } }));
    const two = await run(['serve', '--providers', yaml, '--check-drift', folder]);
    expect(two).toMatchObject({ code: 8, stderr: 'error: all 2 recorded answers not asked again: the provider is down (refused or timed out): none was checked\n' });
  });
});

describe("a role file that does not parse is a damaged file, as every store's", () => {
  it('roles list leaves it out with the one warning; roles show and chat --role stop with exit 1, nothing sent', async () => {
    expect((await run(['roles', 'save', 'fine', '--system', 'Be short.', '--model', 'local/echo'])).code).toBe(0);
    const path = JSON.parse((await run(['roles', 'show', 'fine', '--json'])).stdout).path as string;
    const bad = join(path, '..', 'broken.md');
    writeFileSync(bad, '---\nmodel: [\n---\nhi\n');
    const list = await run(['roles', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^fine\tlocal\/echo\tBe short\.\n$/);
    // Was: "warning: role file PATH: line 3, …" in words of its own.
    expect(list.stderr).toMatch(new RegExp(`^warning: ${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is damaged and left out \\(line 3, column 1: .+; router roles edit broken mends it\\)\\n$`));
    for (const args of [['roles', 'show', 'broken'], ['chat', '--role', 'broken', 'hi']]) {
      const r = await run(args);
      // Was: exit 2, as for bad input typed; a damaged kept file is exit 1 (docs/reliability.md).
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toMatch(/^error: \S+broken\.md is damaged \(line 3, column 1: .+\): router roles edit broken mends it, or move it away\n$/);
    }
    expect(sent()).toEqual([]);
  });
});
