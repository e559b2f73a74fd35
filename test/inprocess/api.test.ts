/**
 * Scripting as with gh: --json FIELDS and --jq on every command with --json, router api, the usage
 * ledger and router usage, and conversations; in process against the emulator over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { seedScripting } from '../support/scripting-state.js';

let t: CliEnv;
let mgmt: Record<string, string>;
let batchId: string;
let jobId: string;
let jsonl: string;
beforeAll(async () => {
  t = await startCliEnv();
  mgmt = { ROUTER_MANAGEMENT_KEY: t.managementKey };
  ({ jsonl, batchId, jobId } = await seedScripting(t));
});
afterAll(() => t.close());

const parse = (s: string) => JSON.parse(s) as unknown;

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
    expect(missing.stderr).toMatch(/^error: GET \/api\/v1\/batches\/batch_nope: 404 Not Found: No batch found/);
  });

  it('a 403 that asks for a management key says how to set one, as speak and decide say it', async () => {
    const speech = await t.run(['api', 'POST', '/v1/audio/speech', '-f', 'model=local/tts', '-f', 'voice=alloy', '-f', 'input=hi']);
    expect(speech.code).toBe(3);
    expect(speech.stderr).toMatch(/^error: POST \/api\/v1\/audio\/speech: 403 Forbidden: .*management key.* \(set one: export ROUTER_MANAGEMENT_KEY=…, or printf %s "\$KEY" \| router config set management_key; router serve prints one\)\n$/);
    const speak = await t.run(['speak', '--model', 'local/tts', '--voice', 'alloy', 'hi', '-o', join(t.dir, 'no.mp3')]);
    expect(speak.stderr.replace(/^error: \S+ /, '')).toBe(speech.stderr.replace(/^error: \S+ /, ''));
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

  it('-F: a number JSON would change (1e999 to null, 2^64 to another integer) is refused, nothing sent; -f sends it as text', async () => {
    t.clearRequests();
    for (const raw of ['1e999', '-1e999', '18446744073709551615', '9007199254740993.0', '9007199254740993e0', '1e22', '1e-400', '-1.5e-999']) {
      const r = await t.run(['api', 'POST', '/v1/chat/completions', '-F', `seed=${raw}`]);
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: `error: -F seed=${raw}: the number cannot be sent as it is (past what JSON numbers hold here); -f sends it as a string\n` });
    }
    expect(t.requests()).toHaveLength(0);
    const safe = await t.run(['api', 'POST', '/v1/chat/completions', '-f', 'model=local/echo', '-F', 'messages[][role]=user', '-f', 'messages[][content]=hi', '-F', 'seed=9007199254740991', '-F', 'temperature=1e-3', '-F', 'top_p=0.0']);
    expect(safe.code, safe.stderr).toBe(0);
    expect(t.requests().at(-1)!.body).toMatchObject({ seed: 9007199254740991, temperature: 0.001, top_p: 0 });
  });

  it('-F key=@- reads the value from stdin, as gh api does; stdin is read once', async () => {
    t.clearRequests();
    const r = await t.run(['api', 'POST', '/v1/chat/completions', '-f', 'model=local/echo', '-F', 'messages[][role]=user', '-F', 'messages[][content]=@-', '--jq', '.choices[0].message.content'], { input: 'from stdin' });
    expect(r).toMatchObject({ code: 0, stdout: 'from stdin\n' });
    expect(t.requests().at(-1)!.body.messages).toEqual([{ role: 'user', content: 'from stdin' }]);
    const twice = await t.run(['api', 'POST', '/v1/chat/completions', '-F', 'a=@-', '-F', 'b=@-'], { input: 'x' });
    expect(twice).toMatchObject({ code: 2, stderr: 'error: -F b=@-: stdin was read by -F a=@-; it can be read once\n' });
    const withInput = await t.run(['api', 'POST', '/v1/chat/completions', '-F', 'a=@-', '--input', '-'], { input: 'x' });
    expect(withInput).toMatchObject({ code: 2, stderr: 'error: --input -: stdin was read by -F a=@-; it can be read once\n' });
    expect(t.requests()).toHaveLength(1);
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
