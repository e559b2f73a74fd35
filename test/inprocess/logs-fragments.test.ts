/**
 * llm's logs and fragments: `router logs` (-n, -q, --model, --conversation, --json, -t) over the kept
 * conversations, and `chat -f/--sf` with fragments kept once by hash (`router fragments`); in process
 * against the emulator, fragment URLs served by a plain HTTP server on 127.0.0.1 that records what it got.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { webServer } from '../support/upstreams.js';
import { FragmentStore } from '../../src/kit/fragments.js';
import { fetchFragment } from '../../src/kit/fragment-sources.js';
import { FragmentError } from '../../src/kit/errors.js';
import { ConversationStore } from '../../src/kit/conversation-store.js';
import { queryLog } from '../../src/kit/conversation-log.js';
import { chatModel } from '../../src/kit/conversation.js';
import { RouterClient } from '../../src/client/index.js';

let t: CliEnv;
let web: { root: string; close(): Promise<void> };
let webRoot: string;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
beforeAll(async () => {
  t = await startCliEnv();
  web = await webServer((req, res) => {
    seen.push({ url: req.url!, headers: req.headers });
    if (req.url === '/doc.txt') return res.end('Pelicans keep fish in their pouch.\n');
    if (req.url === '/moved') return res.writeHead(302, { location: '/doc.txt' }).end();
    if (req.url === '/big') return res.end('x'.repeat(5000));
    if (req.url === '/binary') return res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]));
    if (req.url === '/stall') return; // never answers
    if (req.url === '/half') return res.writeHead(200).write('the first words'); // its head, then nothing
    res.writeHead(404).end('no such page');
  });
  webRoot = web.root;
});
afterAll(async () => {
  await web.close();
  await t.close();
});

let n = 0;
/** A state folder of its own for each test, and its work folder with notes.txt. */
function user() {
  const dir = join(t.dir, `u${++n}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'notes.txt'), 'The door code is 4711.');
  const env = { ROUTER_STATE_DIR: join(dir, 'state') };
  return { dir, env, run: (args: string[], input?: string) => t.run(args, { env, cwd: dir, input }) };
}
const chatBodies = () => t.requests().filter((q) => q.path === '/v1/chat/completions').map((q) => q.body);

describe('chat -f and --sf', () => {
  it('puts the file before the prompt, keeps it once by hash, and sends it again with -c', async () => {
    const u = user();
    t.clearRequests();
    const r = await u.run(['chat', '-f', 'notes.txt', 'what is the door code?', '--model', 'local/echo']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(chatBodies()[0].messages).toEqual([{ role: 'user', content: 'The door code is 4711.\nwhat is the door code?' }]);
    await u.run(['chat', '-f', 'notes.txt', 'again', '--model', 'local/echo']);
    const stored = readdirSync(join(u.env.ROUTER_STATE_DIR, 'fragments')).filter((f) => f.endsWith('.json'));
    expect(stored).toHaveLength(1);
    const hash = stored[0]!.slice(0, 64);
    // The conversation names the fragment; its text is kept once, in the fragment's file.
    const folder = join(u.env.ROUTER_STATE_DIR, 'conversations');
    const firsts = readdirSync(folder).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(join(folder, f), 'utf8')).messages[0]);
    expect(firsts.map((m) => m.content).sort()).toEqual(['again', 'what is the door code?']);
    for (const m of firsts) expect(m.fragments).toEqual([hash]);
    t.clearRequests();
    expect((await u.run(['chat', '-c', 'and now?'])).code).toBe(0);
    // No field of router's own reaches the service: the history goes as its text.
    expect(chatBodies()[0].messages.map((m: any) => Object.keys(m).sort().join())).toEqual(['content,role', 'content,role', 'content,role']);
    expect(chatBodies()[0].messages[0].content).toBe('The door code is 4711.\nagain');
  });

  it('--sf - makes the system message from stdin; the prompt is the arguments; fragments alone are a prompt', async () => {
    const u = user();
    t.clearRequests();
    const r = await u.run(['chat', '--sf', '-', '-f', 'notes.txt', 'code?', '--model', 'local/echo'], 'Answer in one word.');
    expect(r.code).toBe(0);
    expect(chatBodies()[0].messages).toEqual([{ role: 'system', content: 'Answer in one word.' }, { role: 'user', content: 'The door code is 4711.\ncode?' }]);
    t.clearRequests();
    expect((await u.run(['chat', '-f', '-', '--model', 'local/echo'], 'only this'))).toMatchObject({ code: 0, stdout: 'only this\n' });
    expect(chatBodies()[0].messages).toEqual([{ role: 'user', content: 'only this' }]);
    // An empty stdin beside a prompt adds nothing, as the prompt's own stdin (a grep before it that found nothing).
    t.clearRequests();
    expect(await u.run(['chat', '-f', '-', 'alone', '--model', 'local/echo'], '')).toMatchObject({ code: 0, stdout: 'alone\n' });
    expect(chatBodies()[0].messages).toEqual([{ role: 'user', content: 'alone' }]);
    const twice = await u.run(['chat', '-f', '-', '--sf', '-', 'x', '--model', 'local/echo'], 'a');
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/stdin was read by --fragment; it can be read once/);
  });

  it('fetches a URL without the key (redirects followed); a failed one is one line, nothing sent', async () => {
    const u = user();
    seen.length = 0;
    t.clearRequests();
    const r = await u.run(['chat', '-f', `${webRoot}/moved`, 'why?', '--model', 'local/echo']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(chatBodies()[0].messages[0].content).toBe('Pelicans keep fish in their pouch.\n\nwhy?');
    expect(seen.map((s) => s.url)).toEqual(['/moved', '/doc.txt']);
    for (const s of seen) {
      expect(s.headers.authorization).toBeUndefined();
      expect(JSON.stringify(s.headers)).not.toContain(t.apiKey);
    }
    t.clearRequests();
    const missing = await u.run(['chat', '-f', `${webRoot}/gone`, 'why?', '--model', 'local/echo']);
    expect(missing.stderr).toBe(`error: fragment ${webRoot}/gone: HTTP 404\n`);
    expect(missing.code).toBe(8);
    const binary = await u.run(['chat', '-f', `${webRoot}/binary`, 'why?', '--model', 'local/echo']);
    expect(binary.code).toBe(2);
    expect(binary.stderr).toMatch(/^error: fragment .*\/binary: not UTF-8 text/);
    const stalled = await u.run(['--timeout', '200ms', 'chat', '-f', `${webRoot}/stall`, 'why?', '--model', 'local/echo', '--max-retries', '0']);
    expect(stalled.code).toBe(8);
    expect(stalled.stderr).toMatch(/^error: fragment .*\/stall: .*timed out/);
    expect(chatBodies()).toEqual([]);
  });

  it('a body that stops coming is a timeout in words, as the head that never comes', async () => {
    const stopped = await fetchFragment(`${webRoot}/half`, { timeoutMs: 200, maxRetries: 0 }).catch((err: Error) => err);
    expect(stopped).toMatchObject({ code: 'fetch_failed', cause: { name: 'TimeoutError' } });
    expect((stopped as Error).message).toMatch(/: timed out: not fetched within 200ms$/);
  });

  it('a URL larger than the bound is refused (the library\'s maxBytes)', async () => {
    await expect(fetchFragment(`${webRoot}/big`, { maxBytes: 1000 })).rejects.toMatchObject({ code: 'too_large' });
    await expect(fetchFragment(`${webRoot}/doc.txt`, { maxBytes: 1000 })).resolves.toBe('Pelicans keep fish in their pouch.\n');
  });

  it('a name that is no file, URL, alias or hash is exit 5, nothing sent', async () => {
    const u = user();
    t.clearRequests();
    const r = await u.run(['chat', '-f', 'nope.txt', 'hi', '--model', 'local/echo']);
    expect(r.stderr).toBe('error: fragment nope.txt: no file, URL, alias or hash of that name (router fragments list shows those kept)\n');
    expect(r.code).toBe(5);
    expect(chatBodies()).toEqual([]);
  });
});

describe('router fragments', () => {
  it('list, show, set an alias chat -f takes, remove it', async () => {
    const u = user();
    expect((await u.run(['fragments', 'set', 'door', 'notes.txt'])).code).toBe(0);
    t.clearRequests();
    expect((await u.run(['chat', '-f', 'door', 'code?', '--model', 'local/echo'])).code).toBe(0);
    expect(chatBodies()[0].messages[0].content).toBe('The door code is 4711.\ncode?');
    const list = JSON.parse((await u.run(['fragments', 'list', '--json'])).stdout);
    expect(list).toEqual([expect.objectContaining({ aliases: ['door'], source: join(u.dir, 'notes.txt'), length: 22, preview: 'The door code is 4711.' })]);
    expect((await u.run(['fragments', 'show', 'door'])).stdout).toBe('The door code is 4711.\n');
    expect((await u.run(['fragments', 'show', list[0].hash])).stdout).toBe('The door code is 4711.\n');
    expect((await u.run(['fragments', 'remove', 'door'])).code).toBe(0);
    const gone = await u.run(['fragments', 'show', 'door']);
    expect(gone.code).toBe(5);
    // The fragment stays: conversations name it by hash.
    expect((await u.run(['fragments', 'show', list[0].hash])).code).toBe(0);
    const bad = await u.run(['fragments', 'set', 'a/b', `${webRoot}/doc.txt`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: fragment a\/b: an alias is 1 to 64 letters/);
  });

  it("the library's Conversation takes up a conversation kept with fragments, sending their text", async () => {
    const u = user();
    await u.run(['chat', '--conversation', 'lib', '-f', 'notes.txt', 'code?', '--model', 'local/echo']);
    const client = new RouterClient({ apiKey: t.apiKey, apiRoot: t.apiRoot });
    try {
      t.clearRequests();
      const c = chatModel(client, 'local/echo').conversation({ store: new ConversationStore({ env: u.env }), id: 'lib' });
      expect((await c.prompt('again')).text).toBe('again');
      expect(chatBodies()[0].messages.slice(0, 1)).toEqual([{ role: 'user', content: 'The door code is 4711.\ncode?' }]);
      // Kept as it was: by hash.
      expect((c.kept!.messages[0] as { fragments?: string[] }).fragments).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('the library keeps a text once and expands messages that name it', () => {
    const store = new FragmentStore({ dir: join(t.dir, 'kit-fragments') });
    const a = store.put('same', 'one');
    const b = store.put('same', 'two');
    expect(b).toEqual(a);
    expect(store.expand([{ role: 'user', content: 'q', fragments: [a.hash] } as never])).toEqual([{ role: 'user', content: 'same\nq' }]);
    expect(() => store.expand([{ role: 'user', content: 'q', fragments: ['0'.repeat(64)] } as never])).toThrow(FragmentError);
  });
});

describe('router logs', () => {
  async function seeded() {
    const u = user();
    await u.run(['chat', '--conversation', 'pets', '--model', 'local/echo', 'ten names for a pet pelican']);
    await u.run(['chat', '--conversation', 'pets', 'and for a walrus']);
    await u.run(['chat', '--conversation', 'trip', '--model', 'local/lorem', 'plan a day in Lisbon']);
    await u.run(['chat', '--conversation', 'code', '--model', 'local/echo', '-f', 'notes.txt', 'the door CODE please']);
    return u;
  }

  it('the last 3 by default, newest last; -n N; -n 0 all', async () => {
    const u = await seeded();
    const ids = async (...args: string[]) => JSON.parse((await u.run(['logs', '--json', 'id', ...args])).stdout).map((e: { id: string }) => e.id);
    expect(await ids()).toEqual(['pets#2', 'trip#1', 'code#1']);
    expect(await ids('-n', '1')).toEqual(['code#1']);
    expect(await ids('-n', '0')).toEqual(['pets#1', 'pets#2', 'trip#1', 'code#1']);
  });

  it('-q (words, "phrases", any case) over prompts and answers; --model; --conversation', async () => {
    const u = await seeded();
    const ids = async (...args: string[]) => JSON.parse((await u.run(['logs', '--json', 'id', ...args])).stdout).map((e: { id: string }) => e.id);
    expect(await ids('-q', 'PELICAN')).toEqual(['pets#1']);
    expect(await ids('--query', '"a pet"')).toEqual(['pets#1']);
    expect(await ids('--query', 'WALRUS for', '-n', '0')).toEqual(['pets#2']);
    expect(await ids('names', 'pet', '-n', '0')).toEqual(['pets#1']);
    expect(await ids('-m', 'local/lorem')).toEqual(['trip#1']);
    expect(await ids('--conversation', 'pets', '-n', '0')).toEqual(['pets#1', 'pets#2']);
    expect(await ids('-c', '-n', '0')).toEqual(['code#1']);
    expect((await u.run(['logs', '-c', '--conversation', 'pets'])).code).toBe(2);
    // The prompt typed beside a fragment is searched (its text, as llm's, is not: the echo's answer holds it here).
    expect(await ids('-q', 'door')).toEqual(['code#1']);
    const none = await u.run(['logs', '-q', 'zebra']);
    expect(none).toMatchObject({ code: 0, stdout: '' });
  });

  it('--conversation naming none kept is a usage error with the nearest, not an empty log', async () => {
    const u = await seeded();
    const typo = await u.run(['logs', '--conversation', 'pest']);
    expect(typo).toMatchObject({ code: 2, stdout: '' });
    expect(typo.stderr).toBe('error: --conversation pest: no conversation has that id (did you mean pets?) (router conversations list shows them)\n');
  });

  it('Markdown by default, the fragments by hash; -t cuts to 100 characters on one line', async () => {
    const u = await seeded();
    await u.run(['chat', '--conversation', 'long', '--model', 'local/echo', `${'word '.repeat(40)}\nend`]);
    const text = (await u.run(['logs', '-n', '2'])).stdout;
    expect(text).toMatch(/^# \S+ {4}id: code#1\n\nModel: \*\*local\/echo\*\*\n\n## Fragments\n\n- [0-9a-f]{64}\n\n## Prompt\n\nthe door CODE please\n\n## Response\n\n/);
    const [cut] = JSON.parse((await u.run(['logs', '-n', '1', '-t', '--json'])).stdout);
    expect(cut.prompt).toBe(`${'word '.repeat(20)}...`);
    expect(cut.prompt.length).toBe(103);
  });

  it('bad input is one line, exit 2', async () => {
    const u = user();
    expect((await u.run(['logs', '-n', '-1'])).code).toBe(2);
    const bad = await u.run(['logs', '--conversation', '.hidden']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: conversation id ".hidden"/);
  });

  // The 10,000 files written in a hook, and each query a test, each with its own bound: in one test of 120 s they
  // passed it at load 30-49 on two cores (~1.7 s of CPU in all, 40-140 s of wall there).
  describe('10,000 conversations: the last N and a search read them one at a time', () => {
    let store: ConversationStore;
    beforeAll(() => {
      const dir = join(t.dir, 'many');
      mkdirSync(dir);
      for (let i = 0; i < 10_000; i++) {
        const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
        const say = i % 1000 === 7 ? `needle ${i}` : `hay ${i}`;
        writeFileSync(join(dir, `c${i}.json`), JSON.stringify({ id: `c${i}`, title: say, model: 'local/echo', created_at: at, updated_at: at, messages: [{ role: 'user', content: say }, { role: 'assistant', content: say }] }));
      }
      store = new ConversationStore({ dir });
    });

    it('the last N', () => {
      expect([...queryLog(store, { count: 2 }).entries].map((e) => e.id)).toEqual(['c9998#1', 'c9999#1']);
    });

    it('a search', () => {
      expect([...queryLog(store, { count: 3, query: 'needle' }).entries].map((e) => e.prompt)).toEqual(['needle 7007', 'needle 8007', 'needle 9007']);
    });

    it('all of them', () => {
      let all = 0;
      for (const e of queryLog(store).entries) if (e.turn === 1) all++;
      expect(all).toBe(10_000);
    });
  });
});
