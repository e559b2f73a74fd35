import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));
const faults = (...specs: string[]) => t.admin('faults', { faults: specs });
const count = (path: string) => t.requests().filter((r) => r.path === path && r.method === 'POST').length;

describe('retries', () => {
  it('recovers from two 503s, saying so with --verbose', async () => {
    await faults('503,times=2,path=/v1/chat/completions');
    const r = await run(['chat', '--model', 'local/echo', '--verbose', 'again']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('again\n');
    expect(r.stderr.match(/^retry \d in \d+\.\ds: Injected fault: HTTP 503$/gm)).toHaveLength(2);
    expect(count('/v1/chat/completions')).toBe(3);
  });

  it('honors Retry-After on 429', async () => {
    // spec: errors.rate-limit
    await faults('429,retry_after=1,times=1,path=/v1/chat/completions');
    const started = Date.now();
    const r = await run(['chat', '--model', 'local/echo', '--verbose', 'later']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/retry 1 in 1\.0s/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('gives up after --max-retries: 429 exits 6, 500 exits 7, a reset exits 8', async () => {
    await faults('429,retry_after=0');
    const a = await run(['chat', '--max-retries', '1', 'x']);
    expect(a.code).toBe(6);
    expect(count('/v1/chat/completions')).toBe(2);
    await faults('500');
    expect((await run(['chat', '--max-retries', '0', 'x'])).code).toBe(7);
    await faults('reset');
    const c = await run(['chat', '--max-retries', '0', 'x']);
    expect(c.code).toBe(8);
    expect(c.stderr).toMatch(/^error: connection to 127\.0\.0\.1:\d+ failed/);
  });

  it('times out on a slow first byte (exit 8)', async () => {
    await faults('slow,delay_ms=1500');
    const r = await run(['--timeout', '300ms', '--max-retries', '0', 'chat', 'x']);
    expect(r.code).toBe(8);
    // It says which wait ran out, so that the one to change is named.
    expect(r.stderr).toMatch(/^error: timed out waiting for 127\.0\.0\.1:\d+ \(--timeout 300ms\)\n$/);
  });

  it('a whole answer stalled after its head: a GET is sent again; a paid POST is not, and says why', async () => {
    await faults('held,after=0,times=1,path=/v1/models,method=GET');
    const before = t.requests().filter((r) => r.path === '/v1/models').length;
    // Was: exit 8 at the first stall, never retried, though a 503 or a stall before the head is.
    const models = await run(['--timeout', '2s', 'models', '--refresh', '--json']);
    expect(models.code, models.stderr).toBe(0);
    expect(JSON.parse(models.stdout).length).toBeGreaterThan(0);
    expect(t.requests().filter((r) => r.path === '/v1/models').length - before).toBe(2);
    await faults('held,after=0,times=1,path=/v1/chat/completions');
    const sent = count('/v1/chat/completions');
    const chat = await run(['--timeout', '1s', 'chat', '--no-stream', '--model', 'local/echo', 'hi']);
    expect(chat.code).toBe(8);
    // Was: "timed out waiting for …" alone, as if nothing had reached the service.
    expect(chat.stderr).toMatch(/^error: timed out waiting for [^\n]*\(not retried: the service may have carried it out, and a retry would be charged again\)/);
    expect(count('/v1/chat/completions') - sent).toBe(1);
  });

  it('a stream cut after the first bytes is not retried: the text so far, one error line, exit 8', async () => {
    await faults('cut,after=2');
    const r = await run(['chat', '--model', 'local/echo', 'one two three four five']);
    expect(r.code).toBe(8);
    expect(r.stdout).toBe('one two');
    expect(r.stderr).toMatch(/^error: the stream was cut before it was complete \(connection to 127\.0\.0\.1:\d+ failed: .+\)\n$/);
    expect(count('/v1/chat/completions')).toBe(1);
  });

  it('audio and batch results cut mid-body say so in the same words as a cut chat stream (exit 8, no file left); malformed results exit 7', async () => {
    const cut = /^error: the stream was cut before it was complete \(connection to 127\.0\.0\.1:\d+ failed: .+\)\n$/;
    const text = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    await faults('cut,after=2,path=/audio/speech');
    const audio = join(t.dir, 'cut.mp3');
    const speak = await run(['speak', text, '--voice', 'alloy', '--model', 'local/tts', '-o', audio], { ROUTER_API_KEY: t.managementKey });
    expect(speak.code).toBe(8);
    expect(speak.stderr).toMatch(cut);
    expect(readdirSync(t.dir).filter((f) => f.includes('cut.mp3'))).toEqual([]);

    await faults();
    const f = join(t.dir, 'cut-results.jsonl');
    writeFileSync(f, Array.from({ length: 40 }, (_, i) => JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `${i} ${'x'.repeat(2000)}` }] } })).join('\n'));
    // --json, not --jq: jq-wasm reads its input a byte at a time, seconds of CPU for this batch's 80 kB.
    const id = JSON.parse((await run(['batch', 'create', f, '--model', 'local/echo', '--watch', '--interval', '0.05', '--json'])).stdout).id as string;
    expect(id).toMatch(/^batch_/);
    await faults('cut,path=/batches/');
    const out = join(t.dir, 'cut-results.out.jsonl');
    const results = await run(['batch', 'get', id, '--results', out]);
    expect(results.code).toBe(8);
    expect(results.stderr).toMatch(cut);
    expect(readdirSync(t.dir).filter((n) => /^(\.router-tmp-)?cut-results\.out/.test(n))).toEqual([]);

    // Complete as HTTP, but its JSON ends mid-item: unreadable (exit 7), and still no file.
    await faults('malformed,path=/batches/');
    const malformed = await run(['batch', 'get', id, '--results', out]);
    expect(malformed).toMatchObject({ code: 7, stderr: 'error: server sent a malformed batch: the JSON text ended early\n' });
    expect(readdirSync(t.dir).filter((n) => /^(\.router-tmp-)?cut-results\.out/.test(n))).toEqual([]);
  });

  it('an error chunk mid-stream: exit 7 with the provider message; --verbose names the error type', async () => {
    await faults('error-chunk,after=1');
    const r = await run(['chat', '--model', 'local/echo', '--verbose', 'one two three']);
    expect(r.code).toBe(7);
    expect(r.stdout).toBe('one');
    expect(r.stderr).toMatch(/error: Provider returned an error mid-stream\n\s+status 502, request id req_\w+, error_type provider_unavailable/);
  });

  it('--json --stream: the error event is printed as it came, a line of the JSONL as the others (chat, responses)', async () => {
    for (const [args, isError] of [
      [['chat'], (e: any) => e.error?.message === 'Provider returned an error mid-stream' && e.choices?.[0]?.finish_reason === 'error'],
      [['responses'], (e: any) => e.type === 'response.failed' && e.response?.status === 'failed'],
    ] as const) {
      await faults('error-chunk,after=2');
      const r = await run([...args, '--model', 'local/echo', '--json', '--stream', 'one two three']);
      expect(r.code, r.stderr).toBe(7);
      expect(r.stderr).toBe('error: Provider returned an error mid-stream\n');
      const events = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
      // Was: the events before it, and the stream's last word, its error, on stderr alone.
      expect(isError(events.at(-1))).toBe(true);
      expect(events.filter(isError)).toHaveLength(1);
    }
  });

  it('malformed JSON from the server: exit 7, one line', async () => {
    await faults('malformed');
    const r = await run(['chat', '--no-stream', 'x']);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/^error: server sent malformed JSON/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a malformed event mid-stream (chat, responses): the text before it, exit 7, one line', async () => {
    await faults('malformed,after=2');
    const chat = await run(['chat', '--model', 'local/echo', 'one two three four five']);
    expect(chat).toMatchObject({ code: 7, stdout: 'one two', stderr: 'error: server sent a malformed stream event: {"id":"gen-\n' });
    const responses = await run(['responses', '--model', 'local/echo', '--stream', '--json', 'one two three four five']);
    expect(responses.code).toBe(7);
    expect(responses.stdout.trim().split('\n').map((l) => JSON.parse(l).type)).toEqual(['response.created', 'response.in_progress']);
    expect(responses.stderr).toBe('error: server sent a malformed stream event: {"id":"gen-\n');
  });

  it('batch create is retried on 503 but not on 500, so no duplicate batch can appear', async () => {
    const f = join(t.dir, 'retry.jsonl');
    writeFileSync(f, '{"custom_id":"a","body":{"messages":[{"role":"user","content":"x"}]}}\n');
    await faults('503,times=1,path=/v1/batches,method=POST');
    const ok = await run(['batch', 'create', f, '--model', 'local/echo']);
    expect(ok.code).toBe(0);
    expect(count('/v1/batches')).toBe(2);
    t.clearRequests();
    await faults('500,times=1,path=/v1/batches,method=POST');
    const no = await run(['batch', 'create', f, '--model', 'local/echo']);
    expect(no.code).toBe(7);
    expect(count('/v1/batches')).toBe(1);
  });

  it('batch create timing out after sending says the batch may exist and how to check', async () => {
    const f = join(t.dir, 'slow.jsonl');
    writeFileSync(f, '{"custom_id":"a","body":{"messages":[{"role":"user","content":"x"}]}}\n');
    // The answer held a minute, the timeout 3 s: long enough that a loaded machine sends the upload before it ends (a
    // 300 ms one could end before the request went out), far shorter than the hold.
    await faults('slow,delay_ms=60000,times=1,path=/v1/batches,method=POST');
    const r = await run(['--timeout', '3', 'batch', 'create', f, '--model', 'local/echo']);
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(/the batch may exist\. Check with: router batch list --created-after \d+/);
    expect(t.requests().filter((q) => q.path === '/v1/batches' && q.method === 'POST')).toHaveLength(1);
  });

  it('batch create whose answer is lost finds its batch in the listing: the id on stdout, exit 0, sent once', async () => {
    const f = join(t.dir, 'lost.jsonl');
    writeFileSync(f, ['a', 'b', 'c'].map((id) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: id }] } })).join('\n'));
    await faults('lost,times=1,path=/v1/batches,method=POST');
    const r = await run(['--verbose', 'batch', 'create', f, '--model', 'local/echo']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^batch_\w+\n$/);
    expect(r.stderr).toMatch(/the upload failed after it was sent \(.+\); found its batch in the listing: batch_\w+/);
    const posts = t.requests().filter((q) => q.path === '/v1/batches' && q.method === 'POST');
    expect(posts).toHaveLength(1);
    const got = await run(['batch', 'get', r.stdout.trim(), '--jq', '.request_counts.total']);
    expect(got.stdout).toBe('3\n');
  });

  it('a lost answer beside a batch of the same shape made just before (the service\'s clock ahead) finds its own, never the other', async () => {
    const f = join(t.dir, 'twin.jsonl');
    writeFileSync(f, ['x', 'y'].map((id) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: id }] } })).join('\n'));
    // The emulator's clock ahead of this machine's: a batch made just before the lost create looks as new as it.
    await t.admin('clock', { advance_seconds: 600 });
    const first = await run(['batch', 'create', f, '--model', 'local/echo']);
    expect(first.code).toBe(0);
    await faults('lost,times=1,path=/v1/batches,method=POST');
    t.clearRequests();
    const r = await run(['--verbose', 'batch', 'create', f, '--model', 'local/echo']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^batch_\w+\n$/);
    expect(r.stdout.trim()).not.toBe(first.stdout.trim());
    const posts = t.requests().filter((q) => q.path === '/v1/batches' && q.method === 'POST');
    expect(posts).toHaveLength(1);
    const newest = await run(['batch', 'list', '--limit', '1', '--jq', '.data[0].id']);
    expect(newest.stdout.trim()).toBe(r.stdout.trim());
  });

  it('a lost answer that two batches made after the newest one before it could be is not guessed: both ids, exit 8', async () => {
    const f = join(t.dir, 'pair.jsonl');
    writeFileSync(f, ['p', 'q'].map((id) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: id }] } })).join('\n'));
    // Two creates of one shape at once from two machines (two state folders: one machine's take turns):
    // both read the listing before either sends; one answer is lost, and its look in the listing (held
    // as well) comes once the other create is in.
    await faults('slow,delay_ms=800,times=3,path=/v1/batches,method=GET', 'lost,times=1,path=/v1/batches,method=POST');
    const both = await Promise.all([1, 2].map((i) => run(['batch', 'create', f, '--model', 'local/echo'], { ROUTER_STATE_DIR: join(t.dir, `pair-state-${i}`) })));
    const made = both.find((r) => r.code === 0)!;
    const lost = both.find((r) => r.code !== 0)!;
    expect(lost.code).toBe(8);
    expect(lost.stdout).toBe('');
    expect(lost.stderr).toContain(made.stdout.trim());
    expect(lost.stderr).toMatch(/; 2 batches match it: batch_\w+, batch_\w+\. Check with: router batch list( --created-after \d+)?\n$/);
  });
});

describe('key safety', () => {
  it('state files of the emulator are private', () => {
    expect(statSync(join(t.dir, 'state', 'state.json')).mode & 0o777).toBe(0o600);
  });

  it('errors and --verbose output never carry the key', async () => {
    await faults('500');
    const r = await run(['--verbose', '--max-retries', '0', 'chat', `key is ${t.apiKey}`]);
    expect(r.code).toBe(7);
    const bad = await run(['--verbose', 'chat', 'x'], { ROUTER_API_ROOT: 'http://127.0.0.1:9/api', ROUTER_API_KEY: t.apiKey });
    expect(bad.code).toBe(8);
  });
});
