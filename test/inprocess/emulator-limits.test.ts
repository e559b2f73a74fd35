import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { post, startCliEnv } from '../support/cli-env.js';
import { bytesHashedDuring } from '../support/hashed.js';
import { until, untilThisTurn } from '../support/until.js';
import { startedForAll } from '../support/for-all.js';

// No request can take the emulator down, and its operator routes cross no workspace.
const t = startedForAll(() => startCliEnv());

// A connection per request, none kept alive: the emulator runs in this process, and on a loaded machine a long block of its
// work (saving a batch's 4 MB of results) can outlast its 5 s keep-alive, so that it closes the idle connection just as
// the next request goes out on it (ECONNRESET, seen at load 30).
const FRESH = { connection: 'close' };
const get = async (path: string, key?: string) => {
  const res = await fetch(`${t.apiRoot}${path}`, { headers: key ? { authorization: `Bearer ${key}`, ...FRESH } : FRESH });
  return { status: res.status, json: (await res.json().catch(() => null)) as any };
};
const admin = async (path: string, key: string, body?: unknown) => {
  const res = await fetch(`${t.apiRoot}/_emulator/${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: (await res.json().catch(() => null)) as any };
};
/** Whether the last request came to `path` and its body was read: its handler under way. */
const bodyRead = (path: string) => {
  const last = t.emu.requestLog.at(-1);
  return last?.path === path && last.bodyBytes !== undefined;
};
/** The generations `ids` in the order they were served. */
const servedOrder = (...ids: string[]) => [...t.emu.store.allGenerations()].map((g) => g.data.id).filter((id) => ids.includes(id as string));
const chat = (content: string, extra: Record<string, unknown> = {}, key = t.apiKey, headers: Record<string, string> = {}) =>
  post(t, '/v1/chat/completions', { model: 'local/lorem', messages: [{ role: 'user', content }], ...extra }, { ...FRESH, ...headers }, key);

describe('bounded resources', () => {
  it('an enormous ask stops at the model maximum, streams without blocking other clients', async () => {
    const res = await fetch(`${t.apiRoot}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local/lorem', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'write 9999999 words' }] }),
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!/^data: .*\n\n/m.test(text)) text += decoder.decode((await reader.read()).value, { stream: true });
    const id = JSON.parse(/^data: (.*)$/m.exec(text)![1]!).id;
    // While that stream is under way, and unread, another client is answered, and the stream has not ended: one made in
    // a block (or past its reader's backpressure) would have been served whole, its generation recorded.
    expect((await chat('write 5 words')).status).toBe(200);
    expect(t.emu.store.generation(id)).toBeUndefined();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const usage = JSON.parse(text.split('\n').filter((l) => l.includes('"usage"')).at(-1)!.slice(6)).usage;
    expect(usage.completion_tokens).toBe(262_144);
    expect(t.emu.store.generation(id)?.data.tokens_completion).toBe(262_144);
    expect(text).toMatch(/"finish_reason":"length"/);
    expect((await chat('hi', { max_tokens: 300_000 })).status).toBe(400);
  });

  it('an enormous ask in a batch is a result cut at the model maximum, never a crash (no poison batch)', async () => {
    const created = await post(t, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'local/lorem', requests: [{ custom_id: 'huge', body: { messages: [{ role: 'user', content: 'write 9999999 words' }] } }] });
    expect(created.status).toBe(202);
    // Its 262,144 tokens take a while on a loaded machine: waited for until the test's bound (the default's).
    expect(await until(() => ['completed', 'failed'].includes(t.emu.batches.store.get(created.json.id)!.status), Infinity)).toBe(true);
    const batch = (await get(`/v1/batches/${created.json.id}`, t.apiKey)).json;
    expect(batch.status).toBe('completed');
    expect(batch.results[0].response.body.choices[0].finish_reason).toBe('length');
  });

  it('a speech at a speed near 0 is refused before any audio is made; range errors read as words', async () => {
    // Made, its audio would be endless: the post, which reads the answer whole, would never end.
    const speech = await post(t, '/v1/audio/speech', { model: 'local/tts', voice: 'alloy', input: 'hello there', speed: 0.0001 }, {}, t.managementKey);
    expect(speech.status).toBe(400);
    expect(speech.json.error.message).toBe('local/tts: speed must be between 0.25 and 4');
    const dims = await post(t, '/v1/embeddings', { model: 'local/embed', input: 'hi', dimensions: 0 });
    expect(dims.status).toBe(400);
    expect(dims.json.error.message).toBe('dimensions must be at least 1');
  });

  it('embeddings: at most 2048 inputs and 1,048,576 numbers an answer; a large one never stalls other clients', async () => {
    const inputs = (n: number) => Array.from({ length: n }, (_, i) => `text ${i}`);
    const many = await post(t, '/v1/embeddings', { model: 'local/embed', input: inputs(2049) });
    expect(many.status).toBe(400);
    expect(many.json.error.message).toBe('local/embed takes at most 2048 inputs per request, not 2049');
    const wide = await post(t, '/v1/embeddings', { model: 'local/embed', input: inputs(2000), dimensions: 65_536 });
    expect(wide.status).toBe(400);
    expect(wide.json.error.message).toBe('local/embed answers at most 1048576 numbers per request (inputs x dimensions): 2000 x 65536 is 131072000');
    const large = post(t, '/v1/embeddings', { model: 'local/embed', input: inputs(2048), dimensions: 512, encoding_format: 'base64' });
    expect(await untilThisTurn(() => bodyRead('/v1/embeddings'))).toBe(true);
    const other = await chat('write 5 words');
    expect(other.status).toBe(200);
    const done = await large;
    expect(done.status).toBe(200);
    // Served between two slices of the large answer (it has 32), not after its last: made in one block, the large one is served first.
    expect(servedOrder(other.json.id, done.json.id)).toEqual([other.json.id, done.json.id]);
    expect(done.json.data).toHaveLength(2048);
    expect(Object.keys(done.json)).toEqual(['object', 'id', 'model', 'provider', 'data', 'usage']);
    expect(Buffer.from(done.json.data[2047].embedding, 'base64').length).toBe(512 * 4);
  });

  it('a batch item that is a large embeddings answer never stalls other clients either', async () => {
    const input = Array.from({ length: 2048 }, (_, i) => `text ${i}`);
    // A short item first: the large one starts as the short one's result is counted, in the same turn of the loop.
    const requests = [{ custom_id: 'short', body: { input: 'hi' } }, { custom_id: 'wide', body: { input, dimensions: 512 } }];
    const created = await post(t, '/v1/batches', { endpoint: '/v1/embeddings', model: 'local/embed', completion_window: '24h', requests }, FRESH);
    expect(created.status).toBe(202);
    const completed = () => t.emu.batches.store.get(created.json.id)!.request_counts.completed;
    expect(await untilThisTurn(() => completed() > 0)).toBe(true);
    // Other clients, one after another, while the large item is made: some are answered between its slices (it has 32).
    // Made in one block, it was done by the turn the short one was seen done, and none is. (A count of answers, not a
    // time: it does not change with the machine's load. Its 4 MB result is saved in one block either way.)
    let between = 0;
    while (completed() < 2) {
      expect((await chat('write 5 words')).status).toBe(200);
      if (completed() < 2) between++;
    }
    expect(between).toBeGreaterThan(0);
    expect(await until(() => t.emu.batches.store.get(created.json.id)!.status === 'completed')).toBe(true);
    // The listing says so without the 4 MB of results a get would carry.
    expect((await get('/v1/batches?limit=1', t.apiKey)).json.data[0]).toMatchObject({ id: created.json.id, status: 'completed', request_counts: { completed: 2 } });
  });

  it('decisions: at most 1000 questions of at most 100 options; a large state is hashed once, not per question', async () => {
    const noul = { type: 'noul', instructions: 'is it?', criteria: { true: 'yes', false: 'no' } };
    const ask = (questions: Record<string, unknown>, state: unknown = 'some content') => post(t, '/alpha/decisions', { model: 'local/judge', state, questions }, {}, t.managementKey);
    const many = await ask(Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`q${i}`, noul])));
    expect(many.status).toBe(400);
    expect(many.json.error.message).toBe('local/judge answers at most 1000 questions per request, not 1001');
    const wide = await ask({ c: { type: 'choice', instructions: 'which?', criteria: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`o${i}`, `option ${i}`])) } });
    expect(wide.status).toBe(400);
    expect(wide.json.error.message).toBe('questions.c.criteria: at most 100 options, not 101');
    const questions = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`q${i}`, noul]));
    const state = 'x '.repeat(100_000);
    // A count, not a time: the bytes this process hashed while the emulator (in process) answered. Hashed once, the
    // state is hashed once, beside 1000 small hashes of a question each (56 KB in all); hashed per question, it is
    // hashed 1000 times (200 MB).
    const { value: large, bytes } = await bytesHashedDuring(() => ask(questions, state));
    expect(Object.keys(large.json.answers)).toHaveLength(1000);
    expect(bytes).toBeGreaterThan(state.length);
    expect(bytes).toBeLessThan(2 * state.length);
  });

  it('deep nesting is a 400 (the limit is 64), in a body and in a batch item; the log route still works', async () => {
    // Built as text: JSON.stringify itself cannot go 5,000 levels deep.
    const deep = `${'['.repeat(5000)}"x"${']'.repeat(5000)}`;
    const r = await post(t, '/v1/chat/completions', `{"model":"local/lorem","messages":[{"role":"user","content":"hi"}],"tools":${deep}}`);
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/nested deeper than 64/);
    const b = await post(t, '/v1/batches', `{"endpoint":"/v1/chat/completions","model":"local/echo","requests":[{"custom_id":"a","body":{"messages":[],"tools":${deep}}}]}`);
    expect(b.status).toBe(400);
    expect((await admin('requests', t.operatorKey)).status).toBe(200);
  });

  it('the clock only goes forward, at most 100 years; a top-up keeps the balance within 1e12: a state that JSON and dates can hold', async () => {
    const clock = (advance_seconds: unknown) => fetch(`${t.apiRoot}/_emulator/clock`, { method: 'POST', headers: { authorization: `Bearer ${t.operatorKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ advance_seconds }) });
    const credits = (amount: unknown) => fetch(`${t.apiRoot}/_emulator/credits`, { method: 'POST', headers: { authorization: `Bearer ${t.managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount }) });
    for (const v of [1e300, -5, 4e9, '60']) expect((await clock(v)).status).toBe(400);
    for (const v of [-1e308, 1e13, 2e12]) expect((await credits(v)).status).toBe(400);
    const ok = await credits(10);
    expect(ok.status).toBe(200);
    expect(typeof (await ok.json()).balance).toBe('number');
    const list = await t.run(['batch', 'list']);
    expect(list).toMatchObject({ code: 0, stderr: '' });
  });

  it('a malformed percent-escape is a 400, with or without a key', async () => {
    expect((await get('/v1/batches/%', t.apiKey)).status).toBe(400);
    expect((await get('/v1/batches/%E0%A4%A')).status).toBe(400);
  });

  it('the request log is bounded by bytes: large bodies are kept by size only', async () => {
    const big = 'x'.repeat(300 * 1024);
    for (let i = 0; i < 3; i++) await post(t, '/v1/embeddings', { model: 'local/embed', input: big });
    const entries = t.emu.requestLog.filter((e: any) => e.path === '/v1/embeddings');
    expect(entries.at(-1)!.body).toEqual({ truncated: true, bytes: expect.any(Number) });
    const kept = t.emu.requestLog.reduce((sum: number, e: any) => sum + (e.bodyBytes ?? 0), 0);
    expect(kept).toBeLessThanOrEqual(16 * 1024 * 1024);
  });
});

describe('emulator routes cross no workspace', () => {
  it('a second workspace sees nothing of the first: its own log and faults; server-wide routes need the operator key', async () => {
    const b = (await admin('workspaces', t.operatorKey, {})).json;
    await chat('secret of A');
    const logB = await admin('requests', b.management_key);
    expect(logB.status).toBe(200);
    expect(JSON.stringify(logB.json)).not.toContain('secret of A');
    expect(JSON.stringify((await admin('requests', t.operatorKey)).json)).toContain('secret of A');
    // B's faults touch only B.
    expect((await admin('faults', b.management_key, { faults: ['503'] })).status).toBe(200);
    expect((await chat('a is fine')).status).toBe(200);
    expect((await chat('b is not', {}, b.api_key)).status).toBe(503);
    expect((await admin('faults', b.management_key, { faults: [] })).status).toBe(200);
    // Server-wide routes: not for a workspace's keys.
    expect((await admin('clock', t.managementKey, { advance_seconds: 1 })).status).toBe(403);
    expect((await admin('workspaces', b.management_key, {})).status).toBe(403);
    expect((await admin('batches', t.managementKey, { delay_ms: 0 })).status).toBe(403);
    // The operator key is no workspace key.
    expect((await chat('hi', {}, t.operatorKey)).status).toBe(403);
  });

  it('fault headers need an accepted key, and times=N limits a header fault to the first N requests', async () => {
    const none = await post(t, '/v1/chat/completions', { model: 'local/echo', messages: [{ role: 'user', content: 'x' }] }, { 'x-router-fault': '503' }, 'sk-wrong-key-0000000000');
    expect(none.status).toBe(401);
    const header = { 'x-router-fault': '503,times=2,retry_after=0' };
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await chat('x', {}, t.apiKey, header)).status);
    expect(codes).toEqual([503, 503, 200]);
  });
});

describe('corrupt state and long waits', () => {
  it('a corrupt batch file is set aside with a warning; a corrupt state file is named, never echoed', async () => {
    const { writeFileSync, mkdirSync, readdirSync } = await import('node:fs');
    const state = mkdtempSync(join(t.dir, 'corrupt-'));
    const { startEmulator } = await import('../../dist/emulator/server.js');
    const emu = await startEmulator({ stateDir: state, port: 0 });
    await emu.close();
    mkdirSync(join(state, 'batches', 'batch_broken'), { recursive: true });
    writeFileSync(join(state, 'batches', 'batch_broken', 'meta.json'), '{"id": "batch_broken", ');
    // Valid JSON of another shape (edited by hand) is set aside the same way.
    mkdirSync(join(state, 'batches', 'batch_shape'), { recursive: true });
    writeFileSync(join(state, 'batches', 'batch_shape', 'meta.json'), '{"id": "batch_shape"}');
    const again = await startEmulator({ stateDir: state, port: 0 });
    await again.close();
    expect(readdirSync(join(state, 'batches'))).toContain('.corrupt-batch_broken');
    expect(readdirSync(join(state, 'batches'))).toContain('.corrupt-batch_shape');
    // Set aside, it stays for a person to look at: a later start does not sweep it.
    await (await startEmulator({ stateDir: state, port: 0 })).close();
    expect(readdirSync(join(state, 'batches'))).toContain('.corrupt-batch_broken');
    writeFileSync(join(state, 'state.json'), '{"keys": [{"key": "sk-rt-v1-secretsecret"');
    const r = await t.run(['serve', '--port', '0', '--state', state]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/state\.json is not valid JSON/);
    expect(r.stderr).not.toMatch(/secretsecret/);
    // Valid JSON of another shape (edited by hand): one line naming the place, never a TypeError.
    const shapes: [string, string][] = [
      ['[]', 'not a JSON object'],
      ['{"keys": 5}', '"keys" is not a list'],
      ['{"keys": [{"key": "sk-rt-v1-secretsecret", "kind": "boss", "workspace": "default"}], "workspaces": {}, "clock_offset_ms": 0}', 'keys[0] is not a key record'],
      ['{"keys": [], "workspaces": {"default": {"total_credits": "lots"}}, "clock_offset_ms": 0}', 'workspace "default" is not a workspace record'],
    ];
    for (const [text, problem] of shapes) {
      writeFileSync(join(state, 'state.json'), text);
      const bad = await t.run(['serve', '--port', '0', '--state', state]);
      expect(bad.code, text).toBe(1);
      expect(bad.stderr).toBe(`error: ${join(state, 'state.json')} is not an emulator state (${problem}): fix it, or move it away to start with new keys\n`);
    }
  });

  it('a Retry-After longer than the cap (or the timeout) is not waited for', async () => {
    await t.admin('faults', { faults: ['429,retry_after=3600,times=1,path=/v1/chat/completions'] });
    // Not timed: a run that waits the hour fails by the test's timeout.
    const r = await t.run(['chat', '--model', 'local/echo', 'hi']);
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/asked to wait 3600s/);
  });
});
