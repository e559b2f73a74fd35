/**
 * Scripting as with gh: --json FIELDS and --jq on every command with --json, router api, the usage
 * ledger and router usage, and conversations; through the real binary against the emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestEnv, type TestEnv } from '../helpers.js';

let t: TestEnv;
let mgmt: Record<string, string>;
let batchId: string;
let jobId: string;
let jsonl: string;
beforeAll(async () => {
  t = await startTestEnv();
  mgmt = { ROUTER_MANAGEMENT_KEY: t.managementKey };
  jsonl = join(t.dir, 'req.jsonl');
  writeFileSync(jsonl, ['a', 'b', 'c'].map((id) => JSON.stringify({ custom_id: id, body: { model: 'local/echo', messages: [{ role: 'user', content: id }] } })).join('\n'));
  batchId = (await t.run(['batch', 'create', jsonl])).stdout.trim();
  jobId = (await t.run(['batch', 'run', jsonl, '--max-requests', '2'])).stdout.trim();
  await t.run(['chat', '--model', 'local/echo', 'kept']);
});
afterAll(() => t.close());

const parse = (s: string) => JSON.parse(s) as unknown;
/** What the fields apply to: array elements, a list page's items (unless the page itself was selected), or the object. */
const items = (v: unknown, wanted: string[]): Record<string, unknown>[] => {
  if (Array.isArray(v)) return v;
  const o = v as { object?: string; data?: unknown[] };
  const page = o.object === 'list' && Array.isArray(o.data) && !wanted.some((f) => f in o);
  return page ? (o.data as Record<string, unknown>[]) : [v as Record<string, unknown>];
};

describe('--json FIELDS on every command with --json', () => {
  const cases: [string, string[], string, Record<string, string>?][] = [
    ['chat', ['chat', '--model', 'local/echo', 'hi', '--json'], 'model,usage'],
    ['chat --stream', ['chat', '--model', 'local/lorem', '--stream', 'write 3 words', '--json'], 'id,choices'],
    ['responses', ['responses', '--model', 'local/echo', 'hi', '--json'], 'status,output_text'],
    ['embed', ['embed', 'hi', '--model', 'local/embed', '--json'], 'model,usage'],
    ['decide', ['decide', '--model', 'local/judge', '--state-text', 'x', '--noul', 'q', 'ok?', '--json'], 'answers,usage', { ROUTER_MANAGEMENT_KEY: 'MGMT' }],
    ['speak -o', ['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', 'OUT', '--json'], 'bytes,content_type', { ROUTER_MANAGEMENT_KEY: 'MGMT' }],
    ['config list', ['config', 'list', '--json'], 'current,profiles'],
    ['batch create', ['batch', 'create', 'JSONL', '--json'], 'id,status'],
    ['batch list', ['batch', 'list', '--json'], 'id,status'],
    ['batch get', ['batch', 'get', 'BATCH', '--json'], 'status,request_counts'],
    ['batch run --dry-run', ['batch', 'run', 'JSONL', '--dry-run', '--json'], 'requests,shards'],
    ['batch jobs', ['batch', 'jobs', '--json'], 'id,totals'],
    ['batch job', ['batch', 'job', 'JOB', '--json'], 'shards,totals'],
    ['usage', ['usage', '--json'], 'total'],
    ['conversations list', ['conversations', 'list', '--json'], 'id,turns'],
  ];
  const fill = (args: string[]) => args.map((a) => ({ JSONL: jsonl, BATCH: batchId, JOB: jobId, OUT: join(t.dir, 'o.mp3') })[a] ?? a);
  for (const [name, args, fields, env] of cases) {
    it(`${name}: only ${fields}; an unknown field names the fields and sends nothing`, async () => {
      const e = env ? { ROUTER_MANAGEMENT_KEY: t.managementKey } : {};
      const r = await t.run([...fill(args), fields], { env: e });
      expect(r.code, r.stderr).toBe(0);
      const wanted = fields.split(',');
      const lines = r.stdout.trim().split('\n');
      for (const line of name === 'chat --stream' ? lines : [r.stdout]) {
        for (const item of items(parse(line), wanted)) {
          expect(Object.keys(item).every((k) => wanted.includes(k)), `${Object.keys(item)}`).toBe(true);
          expect(Object.keys(item).length).toBeGreaterThan(0);
        }
      }
      t.clearRequests();
      const bad = await t.run([...fill(args).slice(0, -1), '--json=nonesuch'], { env: e });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/unknown JSON field "nonesuch"; fields of "[\w ]+": \w+/);
      expect(t.requests()).toHaveLength(0);
    });
  }

  it('serve: only api_root,state_dir on its one JSON line', async () => {
    const child = t.spawn(['serve', '--port', '0', '--state', join(t.dir, 'serve-fields'), '--json', 'api_root,state_dir']);
    const line = await new Promise<string>((resolve) => {
      let out = '';
      child.stdout!.on('data', (c) => {
        out += c;
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
    });
    child.kill('SIGTERM');
    expect(Object.keys(JSON.parse(line)).sort()).toEqual(['api_root', 'state_dir']);
  });

  it('a word after --json that is not a field list stays the prompt', async () => {
    const r = await t.run(['chat', '--model', 'local/echo', '--json', 'hello']);
    expect((parse(r.stdout) as any).choices[0].message.content).toBe('hello');
  });
});

describe('--jq', () => {
  it('on a list and on a single object prints raw strings; a bad expression is refused before sending', async () => {
    const ids = await t.run(['batch', 'list', '--jq', '.data[].id']);
    expect(ids.stdout.split('\n')).toContain(batchId);
    const one = await t.run(['batch', 'get', batchId, '--jq', '.request_counts.total']);
    expect(one.stdout).toBe('3\n');
    const text = await t.run(['chat', '--model', 'local/echo', '--jq', '.choices[0].message.content', 'plain text']);
    expect(text.stdout).toBe('plain text\n');
    const chunks = await t.run(['chat', '--model', 'local/lorem', '--stream', '--jq', '.choices[0].delta.content // empty', 'write 3 words']);
    expect(chunks.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(3);
    expect(chunks.stdout).not.toContain('"');
    t.clearRequests();
    const bad = await t.run(['chat', '--model', 'local/echo', '--jq', '.[', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --jq: syntax error/);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(t.requests()).toHaveLength(0);
  });
});

describe('router api', () => {
  it('GET with -f as query, -H, -i, --verbose; the exit code follows the status', async () => {
    t.clearRequests();
    const r = await t.run(['api', '/v1/batches', '-X', 'GET', '-f', 'limit=1', '-H', 'x-trace: abc', '-i', '--verbose']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^HTTP\/1\.1 200\r\n/);
    expect(r.stdout).toMatch(/content-type: application\/json/);
    expect(r.stderr).toMatch(/GET \/v1\/batches -> 200/);
    const sent = t.requests().at(-1)!;
    expect(sent.query.limit).toEqual(['1']);
    expect(sent.headers['x-trace']).toBe('abc');
    const missing = await t.run(['api', '/v1/batches/batch_nope']);
    expect(missing.code).toBe(5);
    expect(parse(missing.stdout)).toMatchObject({ error: { code: 404 } });
    expect(missing.stderr).toMatch(/^error: HTTP 404: No batch found/);
  });

  it('POST with -f and typed -F (numbers, booleans, @file, nested keys), --input FILE and -', async () => {
    const content = join(t.dir, 'content.txt');
    writeFileSync(content, 'from a file');
    t.clearRequests();
    const r = await t.run(['api', 'POST', '/v1/chat/completions', '-f', 'model=local/echo', '-F', 'messages[][role]=user', '-F', `messages[][content]=@${content}`, '-F', 'temperature=0.5', '-F', 'logprobs=false', '--jq', '.choices[0].message.content']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('from a file\n');
    expect(t.requests().at(-1)!.body).toEqual({ model: 'local/echo', messages: [{ role: 'user', content: 'from a file' }], temperature: 0.5, logprobs: false });
    const body = join(t.dir, 'q.json');
    writeFileSync(body, JSON.stringify({ model: 'local/judge', state: 'x', questions: { q: { type: 'noul', instructions: 'ok?' } } }));
    const fromFile = await t.run(['api', '/alpha/decisions', '--input', body, '--jq', '.answers.q.type'], { env: mgmt });
    expect(fromFile.stdout).toBe('noul\n');
    const fromStdin = await t.run(['api', 'POST', '/v1/embeddings', '--input', '-', '--jq', '.data[0].embedding | length'], { input: JSON.stringify({ model: 'local/embed', input: 'x', dimensions: 4 }) });
    expect(fromStdin.stdout).toBe('4\n');
  });

  it('--paginate follows has_more/last_id over several pages into one list', async () => {
    const ws = await t.admin('workspaces', { credits: 10 });
    const env = { ROUTER_API_KEY: ws.api_key };
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await t.run(['batch', 'create', jsonl], { env })).stdout.trim());
    t.clearRequests();
    const r = await t.run(['api', '/v1/batches', '-f', 'limit=2', '--paginate', '--jq', '.data[].id'], { env });
    expect(r.stdout.trim().split('\n')).toEqual([...made].reverse());
    expect(t.requests().filter((q) => q.path === '/v1/batches')).toHaveLength(3);
  });
});

describe('cost you can see and sum', () => {
  it('--usage on chat, responses, embed, speak and decide', async () => {
    const runs: [string[], RegExp][] = [
      [['chat', '--model', 'local/echo', 'hi', '--usage'], /^usage: \d+ prompt \+ \d+ completion = \d+ tokens, cost \$0\.\d+$/m],
      [['responses', '--model', 'local/echo', 'hi', '--usage'], /^usage: \d+ input \+ \d+ output = \d+ tokens, cost \$/m],
      [['embed', 'hi', '--model', 'local/embed', '--usage'], /^usage: \d+ input tokens, cost \$0\.0+\d+$/m],
      [['decide', '--model', 'local/judge', '--state-text', 'x', '--noul', 'q', 'ok?', '--usage'], /^usage: \d+ input \+ \d+ output = \d+ tokens, cost \$/m],
      [['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'u.mp3'), '--usage'], /^usage: \d+ bytes of audio for 2 characters; the service reports no tokens or cost for speech$/m],
    ];
    for (const [args, line] of runs) {
      const r = await t.run(args, { env: mgmt });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(line);
    }
  });

  it('the ledger keeps every line under 8 concurrent processes, and usage totals match the emulator\'s billing', async () => {
    const ws = await t.admin('workspaces', { credits: 5 });
    const state = join(t.dir, 'ledger-state');
    const env = { ROUTER_API_KEY: ws.api_key, ROUTER_STATE_DIR: state, ROUTER_MANAGEMENT_KEY: ws.management_key };
    const runs = Array.from({ length: 8 }, (_, i) => t.run(['chat', '--model', 'local/lorem', `write ${20 + i} words`], { env }));
    runs.push(t.run(['embed', 'a', 'b', '--model', 'local/embed'], { env }), t.run(['decide', '--model', 'local/judge', '--state-text', 'x', '--noul', 'q', 'ok?'], { env }));
    expect((await Promise.all(runs)).map((r) => r.code)).toEqual(Array(10).fill(0));
    await t.run(['batch', 'create', jsonl, '--watch', '--interval', '0.05'], { env });
    // Left out of the ledger (and billed to another workspace, so the sums below stay exact).
    await t.run(['chat', '--model', 'local/lorem', 'not logged', '--no-log'], { env: { ROUTER_STATE_DIR: state } });
    await t.run(['chat', '--model', 'local/lorem', 'not logged either'], { env: { ROUTER_STATE_DIR: state, ROUTER_NO_LOG: '1' } });
    const lines = readFileSync(join(state, 'usage.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(11);
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    const report = parse((await t.run(['usage', '--json', '--by', 'command'], { env })).stdout) as any;
    const balance = (await (await fetch(`${t.apiRoot}/_emulator/credits`, { method: 'POST', headers: { authorization: `Bearer ${ws.management_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 0 }) })).json()) as { balance: number };
    // What the emulator charged the workspace is what the ledger sums.
    expect(report.total.cost).toBeCloseTo(5 - balance.balance, 9);
    expect(report.total.cost).toBeGreaterThan(0);
    expect(report.rows.map((r: any) => [r.key, r.calls])).toEqual([['batch create', 1], ['chat', 8], ['decide', 1], ['embed', 1]]);
  });
});

describe('conversations', () => {
  it('-c continues the last conversation across three turns; --conversation names one; list, show, delete', async () => {
    const env = { ROUTER_STATE_DIR: join(t.dir, 'conv-state') };
    t.clearRequests();
    await t.run(['chat', '--model', 'local/echo', 'first'], { env });
    await t.run(['chat', '-c', 'second'], { env });
    const third = await t.run(['chat', '--continue', 'third'], { env });
    expect(third.stdout).toBe('third\n');
    const sent = t.requests().filter((q) => q.path === '/v1/chat/completions').map((q) => q.body.messages.map((m: any) => m.content));
    expect(sent).toEqual([['first'], ['first', 'first', 'second'], ['first', 'first', 'second', 'second', 'third']]);
    expect(t.requests().at(-1)!.body.model).toBe('local/echo');
    await t.run(['chat', '--conversation', 'notes', '--model', 'local/echo', 'door code 4711'], { env });
    const list = parse((await t.run(['conversations', 'list', '--json'], { env })).stdout) as any[];
    expect(list.map((c) => [c.id, c.turns])).toEqual([['notes', 1], [expect.stringMatching(/^c_\d{8}_\w+$/), 3]]);
    const shown = await t.run(['conversations', 'show', 'notes'], { env });
    expect(shown.stdout).toBe('user: door code 4711\n\nassistant: door code 4711\n');
    expect((await t.run(['conversations', 'delete', 'notes'], { env })).code).toBe(0);
    expect((await t.run(['conversations', 'show', 'notes'], { env })).code).toBe(5);
    // As llm -c: with no conversation yet, -c starts one (issue 34).
    const none = await t.run(['chat', '-c', '--model', 'local/echo', 'x'], { env: { ROUTER_STATE_DIR: join(t.dir, 'empty-state') } });
    expect(none).toMatchObject({ code: 0, stdout: 'x\n' });
  });
});

describe('conversation files edited or damaged by hand', () => {
  it('list warns and goes on, show and -c say which file and how to remove it (nothing sent), delete removes it', async () => {
    const state = join(t.dir, 'torn-conversation-state');
    const env = { ROUTER_STATE_DIR: state };
    await t.run(['chat', '--conversation', 'good', '--model', 'local/echo', 'kept'], { env });
    await t.run(['chat', '--conversation', 'torn', '--model', 'local/echo', 'soon torn'], { env });
    writeFileSync(join(state, 'conversations', 'torn.json'), '{"id":"torn"}\n');
    const list = await t.run(['--verbose', 'conversations', 'list'], { env });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^good\t/);
    expect(list.stderr).toBe('warning: the conversation file of torn is damaged (router conversations delete torn removes it)\n');
    t.clearRequests();
    for (const args of [['conversations', 'show', 'torn'], ['chat', '-c', 'again']]) {
      const r = await t.run(args, { env });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toBe(`error: the conversation file ${join(state, 'conversations', 'torn.json')} is damaged (router conversations delete torn removes it)\n`);
    }
    expect(t.requests()).toHaveLength(0);
    expect((await t.run(['conversations', 'delete', 'torn'], { env })).code).toBe(0);
    expect((await t.run(['conversations', 'delete', 'torn'], { env })).code).toBe(5);
    expect((await t.run(['--verbose', 'conversations', 'list'], { env })).stderr).toBe('');
  });
});

describe('trust at the edges of the new commands', () => {
  it('one line and the table\'s exit code: api with no service, results to a folder or a full disk, a damaged ledger line', async () => {
    const down = await t.run(['api', '/v1/batches', '--max-retries', '0'], { env: { ROUTER_API_ROOT: 'http://127.0.0.1:9/api' } });
    expect(down.code).toBe(8);
    expect(down.stderr.trim().split('\n')).toHaveLength(1);
    t.clearRequests();
    const folder = await t.run(['batch', 'run', jsonl, '--results', t.dir, '--new']);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toMatch(/^error: .*(folder|directory)/);
    expect(t.requests()).toHaveLength(0);
    // A full device fails on the last write, after the data went out: never a silent success.
    for (const args of [['batch', 'run', '--resume', jobId, '--watch', '--interval', '0.05', '--results', '/dev/full'], ['batch', 'get', batchId, '--results', '/dev/full'], ['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', '/dev/full']]) {
      const full = await t.run(args, { env: mgmt });
      expect(full.code, args.join(' ')).toBe(1);
      expect(full.stderr).toMatch(/^error: cannot write \/dev\/full: disk full$/m);
      expect(full.stderr).not.toMatch(/\n\s+at /);
    }
    const state = join(t.dir, 'damaged-state');
    await t.run(['chat', '--model', 'local/echo', 'one'], { env: { ROUTER_STATE_DIR: state } });
    writeFileSync(join(state, 'usage.jsonl'), `${readFileSync(join(state, 'usage.jsonl'), 'utf8')}{"time": "2026-11-2\n`);
    const report = parse((await t.run(['usage', '--json'], { env: { ROUTER_STATE_DIR: state } })).stdout) as any;
    expect(report.total.calls).toBe(1);
  });
});

