import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RouterClient, ValidationError } from '../../src/client/index.js';
import { type Emulator } from '../../src/emulator/server.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';
import { emulatorPerFile } from '../support/inprocess-env.js';

// Paths, state and input: what a user types never takes a request outside the API root, state
// goes where XDG says, and input that cannot be meant as typed is refused before anything is sent.
let emu: Emulator;
let dir: string;
let env: Record<string, string>;

emulatorPerFile('router-paths-', (f) => ({ emu, dir, env } = f), (folder) => ({ ROUTER_STATE_DIR: join(folder, 'cli-state') }));

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ...o.env } });

/** Runs router and expects a usage error (exit 2, one line) with nothing sent. */
async function refused(args: string[], message: RegExp, o: InProcessOptions = {}): Promise<void> {
  const before = emu.requestLog.length;
  const r = await run(args, o);
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(emu.requestLog.length).toBe(before);
}

describe('paths stay under the API root', () => {
  it('router api and batch get refuse "." and ".." segments, plain, escaped or behind a backslash', async () => {
    for (const path of ['/v1/../../x', '/v1/%2e%2e/%2e%2e/_emulator/requests', '/v1/%2E%2E/x', '/v1/..%2f..%2fx', '/v1\\..\\..\\x', '/v1/./models', '/..']) {
      await refused(['api', path], /"\." or "\.\." segment, which would leave the API root: nothing was sent/);
    }
    await refused(['batch', 'get', '..'], /leave the API root/);
    await refused(['batch', 'get', '.', '--results', join(dir, 'r.jsonl')], /leave the API root/);
    // Names that only look alike still go.
    expect((await run(['api', '/v1/models'])).code).toBe(0);
    expect((await run(['batch', 'get', '...'])).code).toBe(5);
  });

  it('the library refuses them too, whatever resource builds the path', async () => {
    const client = new RouterClient({ apiKey: env.ROUTER_API_KEY, apiRoot: emu.apiRoot, maxRetries: 0 });
    const before = emu.requestLog.length;
    await expect(client.batches.get('..')).rejects.toBeInstanceOf(ValidationError);
    await expect(client.raw.send({ method: 'GET', path: '/v1/%2e%2e/%2e%2e/_emulator/requests' })).rejects.toBeInstanceOf(ValidationError);
    expect(emu.requestLog.length).toBe(before);
    await client.close();
  });
});

describe('conversations', () => {
  it('chats on one conversation at once keep every turn (read, change, write take turns)', async () => {
    expect((await run(['chat', '--model', 'local/echo', '--conversation', 'busy', 'first'])).code).toBe(0);
    const turns = ['a', 'b', 'c', 'd', 'e'];
    const results = await Promise.all(turns.map((t) => run(['chat', '--conversation', 'busy', `turn ${t}`])));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const shown = await run(['conversations', 'show', 'busy', '--json']);
    const messages = (JSON.parse(shown.stdout) as { messages: { role: string; content: string }[] }).messages;
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content).sort()).toEqual(['first', ...turns.map((t) => `turn ${t}`)].sort());
    expect(messages.filter((m) => m.role === 'assistant')).toHaveLength(6);
    // Each answer follows its own question.
    for (let i = 0; i < messages.length; i += 2) expect(messages[i + 1]!.content).toBe(messages[i]!.content);
    // -c goes on from there, with the whole history.
    expect((await run(['chat', '-c', 'last'])).code).toBe(0);
    const again = JSON.parse((await run(['conversations', 'show', 'busy', '--json'])).stdout) as { messages: unknown[] };
    expect(again.messages).toHaveLength(14);
  });
});

describe('what conversations print on a terminal', () => {
  it('escape sequences in a title or a message are shown escaped, never obeyed', async () => {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const folder = join(dir, 'cli-state', 'conversations');
    mkdirSync(folder, { recursive: true });
    const now = new Date().toISOString();
    const title = 'evil\x1b]0;pwned\x07\x1b[2J\ttab\nline\x9b31m';
    const messages = [{ role: 'user', content: 'line one\n\tindented \x1b[31mred\x1b[0m' }, { role: 'assistant', content: 'ok\r\x1b[1Aup' }];
    writeFileSync(join(folder, 'evil.json'), JSON.stringify({ id: 'evil', title, created_at: now, updated_at: now, messages }));
    const list = await run(['conversations', 'list']);
    expect(list.code).toBe(0);
    const line = list.stdout.split('\n').find((l) => l.startsWith('evil\t'))!;
    expect(line).toBe(`evil\t${now}\t1\tdefault\tevil\\u001b]0;pwned\\u0007\\u001b[2J\\ttab\\nline\\u009b31m`);
    // On a terminal a table (its title cut to the width): escaped there too, no control character but the line ends.
    // Its borders' own colors (SGR ...m) aside: the title's OSC, CSI 2J and C1 CSI are none of them.
    const table = (await run(['conversations', 'list'], { tty: { stdout: true } })).stdout.replace(/\x1b\[\d+m/g, '');
    expect(table).toMatch(/^evil +\S+Z +1 +default +evil\\u001b\]0;pwned\\u/m);
    expect(table).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    const shown = await run(['conversations', 'show', 'evil'], { tty: { stdout: true } });
    expect(shown.stdout).toBe('user: line one\n\tindented \\u001b[31mred\\u001b[0m\n\nassistant: ok\\r\\u001b[1Aup\n');
    // Piped, the text is as it was kept (data for a program).
    expect((await run(['conversations', 'show', 'evil'])).stdout).toContain('\x1b[31mred');
  });
});

describe('input that cannot go out as typed', () => {
  it('an API root with a query or a fragment is refused, wherever it comes from', async () => {
    for (const root of [`${emu.apiRoot}?x=1`, `${emu.apiRoot}#top`, `${emu.apiRoot}/?`]) {
      await refused(['--api-root', root, 'chat', '--model', 'local/echo', 'hi'], /--api-root must not hold a query or a fragment/);
      await refused(['chat', '--model', 'local/echo', 'hi'], /ROUTER_API_ROOT must not hold a query or a fragment/, { env: { ROUTER_API_ROOT: root } });
      await refused(['config', 'set', 'api_root', root], /must not hold a query or a fragment/);
    }
    expect(() => new RouterClient({ apiKey: 'sk-x', apiRoot: `${emu.apiRoot}?x=1` })).toThrow(ValidationError);
  });

  it('a header with a line break (or a name HTTP has no room for) is a usage error, with nothing sent', async () => {
    await refused(['api', '/v1/models', '-H', 'x-test: a\r\nx-injected: 1'], /header x-test holds a line break/);
    await refused(['api', '/v1/models', '-H', 'x-test: a\nb'], /header x-test holds a line break/);
    await refused(['api', '/v1/models', '-H', 'x-test: \0'], /header x-test holds a line break/);
    await refused(['api', '/v1/models', '-H', 'bad name: 1'], /not a valid HTTP header name/);
    const client = new RouterClient({ apiKey: env.ROUTER_API_KEY, apiRoot: emu.apiRoot, maxRetries: 0 });
    const before = emu.requestLog.length;
    await expect(client.raw.send({ method: 'GET', path: '/v1/models', headers: { 'x-a': 'b\r\nc' } })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.chat.create({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }, { sessionId: 'a\nb' })).rejects.toBeInstanceOf(ValidationError);
    expect(emu.requestLog.length).toBe(before);
    await client.close();
    expect((await run(['api', '/v1/models', '-H', 'x-test:\tfine'])).code).toBe(0);
  });
});
