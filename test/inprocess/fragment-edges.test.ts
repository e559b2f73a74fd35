/**
 * The edges of chat -f/--sf and `router fragments` (c11): a folder, an empty file, a failed call, a URL that
 * stalls, the listing's key order; in process against the emulator, fragment URLs from a plain HTTP server on
 * 127.0.0.1 that counts what it got.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { webServer } from '../support/upstreams.js';

let t: CliEnv;
let web: { root: string; close(): Promise<void> };
let webRoot: string;
const asked: string[] = [];
beforeAll(async () => {
  t = await startCliEnv();
  web = await webServer((req, res) => {
    asked.push(req.url!);
    if (req.url === '/stall') return; // never answers
    if (req.url === '/trickle') {
      // A byte each 100 ms, 40 of them: no wait is long, the whole is 4 s.
      res.writeHead(200, { 'content-type': 'text/plain' });
      let left = 40;
      const each = setInterval(() => (--left ? res.write('x') : (clearInterval(each), res.end('x'))), 100);
      res.on('close', () => clearInterval(each));
      return;
    }
    res.writeHead(404).end();
  });
  webRoot = web.root;
});
afterAll(async () => {
  await web.close();
  await t.close();
});

let n = 0;
function user() {
  const dir = join(t.dir, `fe${++n}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'notes.txt'), 'The door code is 4711.');
  writeFileSync(join(dir, 'empty.txt'), '');
  const state = join(dir, 'state');
  const env = { ROUTER_STATE_DIR: state };
  return { dir, state, run: (args: string[], input?: string) => t.run(args, { env, cwd: dir, input }) };
}
const chatBodies = () => t.requests().filter((q) => q.path === '/v1/chat/completions').map((q) => q.body);
const keptFragments = (state: string) => (existsSync(join(state, 'fragments')) ? readdirSync(join(state, 'fragments')).filter((f) => f.endsWith('.json')) : []);

describe('chat -f edges', () => {
  it('a folder is one line in words, exit 2, nothing sent', async () => {
    const u = user();
    t.clearRequests();
    const r = await u.run(['chat', '-f', u.dir, 'hi', '--model', 'local/echo']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: fragment ${u.dir}: is a folder: name a file in it\n`);
    expect(r.stderr).not.toMatch(/EISDIR/);
    expect(chatBodies()).toHaveLength(0);
  });

  it('an empty file adds nothing to the prompt (no blank line), and says so', async () => {
    const u = user();
    t.clearRequests();
    const r = await u.run(['chat', '-f', 'empty.txt', '-f', 'notes.txt', 'hi', '--model', 'local/echo']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('note: --fragment empty.txt is empty: nothing added\n');
    expect(chatBodies()[0].messages).toEqual([{ role: 'user', content: 'The door code is 4711.\nhi' }]);
    expect(keptFragments(u.state)).toHaveLength(1);
  });

  it('a call that fails keeps no fragment; one answered keeps it', async () => {
    const u = user();
    const failed = await u.run(['chat', '-f', 'notes.txt', '--sf', 'notes.txt', 'hi', '--model', 'nope/nope']);
    expect(failed.code).not.toBe(0);
    expect(keptFragments(u.state)).toEqual([]);
    const ok = await u.run(['chat', '-f', 'notes.txt', 'hi', '--model', 'local/echo']);
    expect(ok.code).toBe(0);
    expect(keptFragments(u.state)).toHaveLength(1);
  });

  it('a URL that stalls is asked once (a stall is not retried) and the flag that bounds it is named', async () => {
    const u = user();
    asked.length = 0;
    t.clearRequests();
    const r = await u.run(['--timeout', '300ms', 'chat', '-f', `${webRoot}/stall`, 'hi', '--model', 'local/echo']);
    expect(r.code).toBe(8);
    expect(r.stderr).toBe(`error: fragment ${webRoot}/stall: timed out: not fetched within 300ms (--timeout, which bounds the whole fetch of a fragment URL)\n`);
    expect(asked).toEqual(['/stall']);
    expect(chatBodies()).toHaveLength(0);
  });

  it('--timeout bounds the whole fetch of a URL that trickles, not each wait', async () => {
    const u = user();
    t.clearRequests();
    const r = await u.run(['--timeout', '300ms', 'chat', '-f', `${webRoot}/trickle`, 'hi', '--model', 'local/echo']);
    // Was: each 100 ms wait within 300 ms, so the 4 s page was read whole (a slower one, for hours).
    expect(r).toMatchObject({ code: 8, stdout: '' });
    expect(r.stderr).toBe(`error: fragment ${webRoot}/trickle: timed out: not fetched within 300ms (--timeout, which bounds the whole fetch of a fragment URL)\n`);
    expect(chatBodies()).toHaveLength(0);
  });
});

describe('router fragments', () => {
  it('list --json keys come in the order the docs give', async () => {
    const u = user();
    expect((await u.run(['fragments', 'set', 'door', 'notes.txt'])).code).toBe(0);
    const r = await u.run(['fragments', 'list', '--json']);
    expect(Object.keys(JSON.parse(r.stdout)[0])).toEqual(['hash', 'aliases', 'source', 'created_at', 'length', 'preview']);
  });

  it('set of a folder is the same one line, exit 2', async () => {
    const u = user();
    const r = await u.run(['fragments', 'set', 'x', u.dir]);
    expect(r).toMatchObject({ code: 2, stderr: `error: fragment ${u.dir}: is a folder: name a file in it\n` });
  });
});
