import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { ToolSet } from '../../src/kit/toolset.js';
import { toolEnv } from '../../src/kit/tool-env.js';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

// Every cut of a text that may hold a key is made after its keys are hidden, or where no key stands (task k16): a
// window that began inside a key left its end, which hiding no longer knew as the key's.
let t: CliEnv;
beforeAll(async () => (t = await startCliEnv()));
afterAll(() => t.close());

/** No 10 characters of `key` in `text`, wherever they stand. */
function noPiece(text: string, key: string): void {
  for (let at = 0; at + 10 <= key.length; at++) expect(text, `${key.slice(at, at + 10)} at ${at}`).not.toContain(key.slice(at, at + 10));
}

/** A stdio MCP server that writes `said` on its stderr and ends before it answers (one that read a key from a file and printed it). */
function failingServer(name: string, said: string): string {
  const file = join(t.dir, `${name}.cjs`);
  writeFileSync(file, `process.stderr.write(${JSON.stringify(said)}, () => process.exit(1));\n`);
  return `'${process.execPath}' '${file}'`;
}

describe("an MCP server's stderr quoted when it failed to start", () => {
  it('the last 2,000 characters begin at a word, never inside a key: the CLI', async () => {
    const key = t.apiKey;
    // One line: the window of its last 2,000 characters began 20 characters into the key (old: its end was printed).
    const said = `Error: token ${key} ${'failed '.repeat(400)}`.slice(0, 'Error: token '.length + 20 + 2000);
    expect(said.slice(-2000).startsWith(key.slice(20))).toBe(true);
    const r = await t.run(['chat', '--model', 'local/tools', '--mcp', failingServer('window', said), 'hi']);
    expect(r.code).toBe(12);
    expect(r.stderr).toMatch(/^error: MCP server .*: ended before it answered; it said: failed failed .*…\n$/);
    noPiece(r.stderr, key);
  });

  it('the line cut at 300 characters ends at a word: a start of a key followed by more words is not left', async () => {
    // Another profile's key: known to the run (hidden whole), sent by none of its clients.
    const other = 'sk-rt-v1-other0123456789abcdef0123456789';
    expect((await t.run(['config', 'set', 'api_key', '--profile', 'other'], { input: other })).code).toBe(0);
    // The cut left 12 characters of it, then "; it is in ROUTER_MCP…": under the 16 hidden wherever they stand.
    const said = `Error: ${'x'.repeat(280)} ${other} failed\n`;
    const r = await t.run(['chat', '--model', 'local/tools', 'hi'], { env: { ROUTER_MCP: failingServer('line', said) } });
    expect(r.code).toBe(12);
    expect(r.stderr).toContain(`it said: Error: ${'x'.repeat(280)}…; it is in ROUTER_MCP`);
    noPiece(r.stderr, other);
  });

  it("the library: its clients' keys hidden before the cut, a key's end at the window's start left out", async () => {
    const key = 'sk-rt-v1-0123456789abcdef0123456789abcdef0123456789abcdef';
    const client = new RouterClient({ apiKey: key, apiRoot: t.apiRoot, maxRetries: 0 });
    const said = `Error: token ${key} ${'failed '.repeat(400)}`;
    for (const text of [said.slice(0, said.length - 300), `${said}\nError: ${key} again\n`]) {
      const err = await ToolSet.open({ mcp: [failingServer('library', text)], env: toolEnv(process.env) }).then(() => undefined, (e: Error) => e);
      expect(err?.message).toMatch(/ended before it answered; it said: /);
      noPiece(err!.message, key);
    }
    await client.close();
  });
});

describe("the library's errors quoting what a server sent: the client's key hidden before the cut", () => {
  const key = 'sk-rt-v1-0123456789abcdef0123456789abcdef0123456789abcdef';
  /** What the server answers, the key it was sent put in place of KEY. */
  let answer: { status: number; type: string; body: string };
  let server: Server;
  let apiRoot: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(answer.status, { 'content-type': answer.type });
      res.end(answer.body.replace('KEY', String(req.headers.authorization).slice('Bearer '.length)));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    apiRoot = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`;
  });
  afterAll(() => new Promise((done) => server.close(done)));

  const failure = async (call: (c: RouterClient) => Promise<unknown>) => {
    const client = new RouterClient({ apiKey: key, apiRoot, maxRetries: 0 });
    try {
      return await call(client).then(() => '', (err: Error) => err.message);
    } finally {
      await client.close();
    }
  };
  const chat = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

  it('a malformed stream event: its first 80 characters (old: cut first, leaving 14 of the key)', async () => {
    answer = { status: 200, type: 'text/event-stream', body: `data: {"said":"${'x'.repeat(56)} KEY"\n\n` };
    for (const stream of [() => failure(async (c) => { for await (const _ of await c.chat.stream(chat)); }), () => failure(async (c) => { for await (const _ of await c.responses.stream({ model: 'm', input: 'hi' })); })]) {
      const said = await stream();
      expect(said).toMatch(/^server sent a malformed stream event: \{"said":"x+ \*\*\*\*/);
      noPiece(said, key);
    }
  });

  it('an error answer that is not the service\'s: its first 120 words, or a JSON title or detail\'s 200', async () => {
    answer = { status: 500, type: 'text/plain', body: `bad key: ${'y'.repeat(98)} KEY rejected` };
    const plain = await failure((c) => c.chat.create(chat));
    expect(plain).toContain(`bad key: ${'y'.repeat(98)} ****`);
    noPiece(plain, key);
    answer = { status: 403, type: 'application/problem+json', body: JSON.stringify({ title: 'Forbidden', detail: `${'z'.repeat(185)} KEY is not allowed` }) };
    const problem = await failure((c) => c.chat.create(chat));
    expect(problem).toContain(`${'z'.repeat(185)} ****`);
    noPiece(problem, key);
  });
});
