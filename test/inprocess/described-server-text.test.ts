import { createServer, type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runInProcess } from '../support/inprocess.js';

// What describes one thing (src/cli/io/described.ts) prints values a server chose: a generation's model, provider
// and finish reason, a key's label, a batch's error. Piped, a tab or line break in one split its name<TAB>value line
// (`cut -f2`, `IFS=$'\t' read` read the wrong field or a made-up name); on a terminal an escape sequence in one
// moved the cursor or retitled the window. Was: printed raw, both ways. Now shown escaped (\t, \n, \u001b), as
// piped listings' fields are.
const odd = 'a\tb\nforged\tline\x1b]0;pwned\x07\x1b[2J';
let server: Server;
let apiRoot: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://x');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (url.pathname.endsWith('/generation')) {
      res.end(JSON.stringify({ data: { id: 'gen-1', model: odd, provider_name: odd, total_cost: 0.001, finish_reason: odd, streamed: true, created_at: '2026-11-30T00:00:00Z' } }));
    } else if (url.pathname.endsWith('/batches/batch_1')) {
      res.end(JSON.stringify({ id: 'batch_1', object: 'batch', status: 'failed', endpoint: '/v1/chat/completions', model: odd, request_counts: { completed: 0, failed: 1, total: 1 }, created_at: 1700000000, error: { message: odd } }));
    } else {
      res.end(JSON.stringify({ data: { label: odd, limit: null, usage: 0, is_free_tier: false } }));
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  apiRoot = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`;
});
afterAll(() => new Promise((done) => server.close(done)));

const home = mkdtempSync(join(tmpdir(), 'described-odd-'));
const run = (args: string[], tty: boolean) =>
  runInProcess(args, {
    env: { HOME: home, XDG_CONFIG_HOME: join(home, 'c'), XDG_STATE_HOME: join(home, 's'), XDG_DATA_HOME: join(home, 'd'), ROUTER_API_ROOT: apiRoot, ROUTER_API_KEY: 'sk-rt-v1-0123456789abcdef0123456789abcdef', ROUTER_PROFILE: undefined, ROUTER_NO_LOG: '1' },
    tty: { stdin: false, stdout: tty, stderr: false },
    columns: 200,
  });

const commands = [['generation', 'gen-1'], ['auth', 'status'], ['batch', 'get', 'batch_1']];
/** Piped, `batch get` prints its list's one line (id, status, endpoint, model, counts, created): six fields. */
const shape = (args: string[]) => (args[0] === 'batch' ? /^batch_1(\t[^\t]*){5}$/ : /^[a-z][a-z ]*\t[^\t]*$/);

it('piped: every line is one name, one tab, one value (a batch its six fields); the server\'s tabs and line breaks shown as \\t and \\n', async () => {
  for (const args of commands) {
    const r = await run(args, false);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    for (const line of r.stdout.trimEnd().split('\n')) expect(line, args.join(' ')).toMatch(shape(args));
    expect(r.stdout, args.join(' ')).toContain('a\\tb\\nforged\\tline\\u001b]0;pwned\\u0007\\u001b[2J');
    expect(r.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f]/);
  }
});

it('on a terminal: no escape sequence or line break of the server\'s reaches it', async () => {
  for (const args of commands) {
    const r = await run(args, true);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    expect(r.stdout, args.join(' ')).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f]/);
    expect(r.stdout, args.join(' ')).not.toContain('\nforged');
  }
});
