import { describe, expect, it } from 'vitest';
import { post, startCliEnv } from '../support/cli-env.js';
import { until, waitBound } from '../support/until.js';
import { startedForAll } from '../support/for-all.js';

// Values the spec allows (it calls them provider-dependent, or sets no limit) are accepted by the
// CLI and the emulator alike; a model may still answer with its own limit, named in the message.
const t = startedForAll(() => startCliEnv());
const mgmt = () => ({ ROUTER_MANAGEMENT_KEY: t.managementKey });

describe('limits the spec does not set', () => {
  it('chat: provider-dependent samplers take any number', async () => {
    // spec: chat.provider-dependent
    const r = await t.run(['chat', '--model', 'local/echo', '--repetition-penalty', '2.5', '--min-p', '1.5', '--top-a', '3', '--top-k', '-1', 'hi']);
    expect(r.code).toBe(0);
    expect(t.requests().at(-1)!.body).toMatchObject({ repetition_penalty: 2.5, min_p: 1.5, top_a: 3, top_k: -1 });
  });

  it('speech: the speed is the model\'s to judge (the CLI sends any number over 0); 1 only on a model without speed control (the spec\'s 400)', async () => {
    // spec: speech.speed
    expect((await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '--speed', '4'], { env: mgmt() })).code).toBe(0);
    // local/tts takes 0.25 to 4, as OpenAI's TTS does: a speed near 0 would be hours of audio.
    for (const speed of ['5', '0.0001']) {
      const before = t.requests().length;
      const far = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '--speed', speed], { env: mgmt() });
      expect(far.code).toBe(2);
      expect(far.stderr).toBe('error: POST /api/v1/audio/speech: 400 Bad Request: local/tts: speed must be between 0.25 and 4\n');
      expect(t.requests().length).toBe(before + 1);
    }
    const basic = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts-basic', '--speed', '5'], { env: mgmt() });
    expect(basic.code).toBe(2);
    expect(basic.stderr).toMatch(/no speed control/);
  });

  it('decisions: a choice with one option and a score with one level', async () => {
    // spec: decisions.questions
    const r = await t.run(['decide', '--model', 'local/judge', '--state-text', 'x', '--choice', 'c', 'Which?', '--option', 'only=the one', '--score', 's', 'How?', '--level', 'single', '--json'], { env: mgmt() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).answers.c.choice).toBe('only');
  });

  it('embeddings: a 257-character user and 10,000 dimensions', async () => {
    // spec: embeddings.user, embeddings.dimensions
    const r = await t.run(['embed', 'a', '--model', 'local/embed', '--dimensions', '10000', '--user', 'u'.repeat(257), '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).data[0].embedding).toHaveLength(10000);
    const over = await post(t, '/v1/embeddings', { model: 'local/embed', input: 'a', dimensions: 100_000 });
    expect(over.status).toBe(400);
    expect(over.json.error.message).toMatch(/local\/embed gives at most 65536 dimensions/);
  });
});

describe('batch get --json on 402', () => {
  it('prints the spec\'s 402 body (the batch with results null) on stdout, exit 4', async () => {
    // spec: batch.get.402
    const ws = await t.admin('workspaces', { credits: 0.0000001 });
    const env = { ROUTER_API_KEY: ws.api_key };
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const file = join(t.dir, 'pay.jsonl');
    writeFileSync(file, JSON.stringify({ custom_id: 'a', body: { model: 'local/lorem', messages: [{ role: 'user', content: 'write 300 words' }] } }));
    const id = (await t.run(['batch', 'create', file], { env })).stdout.trim();
    await t.run(['batch', 'get', id, '--watch', '--interval', '0.05'], { env });
    const r = await t.run(['batch', 'get', id, '--json'], { env });
    expect(r.code).toBe(4);
    const body = JSON.parse(r.stdout);
    expect(body).toMatchObject({ id, object: 'batch', results: null });
  });
});

describe('pagination across status changes', () => {
  it('a page\'s last_id still works as after when that batch has changed status: nothing repeated, nothing skipped', async () => {
    // spec: batch.list.after
    const ws = await t.admin('workspaces', {});
    const key = ws.api_key;
    await t.admin('batches', { delay_ms: 100_000 });
    const ids: string[] = [];
    try {
      for (const c of ['a', 'b', 'c']) {
        const r = await post(t, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'local/echo', requests: [{ custom_id: c, body: { messages: [{ role: 'user', content: c }] } }] }, {}, key);
        ids.push(r.json.id);
        await t.admin('clock', { advance_seconds: 1 }); // distinct created_at seconds, on the emulator's clock
      }
      const list = async (after?: string) => {
        const res = await fetch(`${t.apiRoot}/v1/batches?status=validating&limit=1${after ? `&after=${after}` : ''}`, { headers: { authorization: `Bearer ${key}` } });
        return { status: res.status, json: (await res.json()) as any };
      };
      const first = await list();
      expect(first.json.data.map((b: any) => b.id)).toEqual([ids[2]]);
      // The batch of that page finishes: it no longer belongs to the filtered listing.
      t.emu.batches.store.get(ids[2])!.status = 'completed';
      const second = await list(first.json.last_id);
      expect(second.status).toBe(200);
      expect(second.json.data.map((b: any) => b.id)).toEqual([ids[1]]);
      const third = await list(second.json.last_id);
      expect(third.json.data.map((b: any) => b.id)).toEqual([ids[0]]);
      expect(third.json.has_more).toBe(false);
    } finally {
      await t.admin('batches', { delay_ms: 0 });
    }
  });
});

describe('credit: insufficient balance is a 402, and the balance never goes below zero', () => {
  it('a request that costs more than the balance is refused before it is served, streaming included', async () => {
    // spec: gen.credit-402
    const ws = await t.admin('workspaces', { credits: 0.00001 });
    const ask = (stream: boolean) => post(t, '/v1/chat/completions', { model: 'local/lorem', stream, messages: [{ role: 'user', content: 'write 5000 words' }] }, {}, ws.api_key);
    for (const stream of [false, true]) {
      const r = await ask(stream);
      expect(r.status).toBe(402);
      expect(r.json.error.message).toMatch(/this request costs \$\d+\.\d+, the balance is \$\d+(\.\d+)?\./);
    }
    // Amounts as a person writes them, not 2e-8.
    const tiny = await t.admin('workspaces', { credits: 0.000000001 });
    const embed = await post(t, '/v1/embeddings', { model: 'local/embed', input: 'hi' }, {}, tiny.api_key);
    expect(embed.status).toBe(402);
    expect(embed.json.error.message).toMatch(/^Insufficient credits: this request costs \$0\.0000000\d+, the balance is \$0\.000000001\. /);
    const small = await post(t, '/v1/chat/completions', { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }, {}, ws.api_key);
    expect(small.status).toBe(200);
    const credits = await fetch(`${t.apiRoot}/v1/credits`, { headers: { authorization: `Bearer ${ws.management_key}` } }).then((r) => r.json() as any);
    expect(credits.data.total_credits - credits.data.total_usage).toBeGreaterThanOrEqual(0);
  });
});

describe('speech references follow the order typed', () => {
  it('each transcript goes with the clip right before it; a transcript with no clip before it is refused', async () => {
    // spec: speech.references
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const wav = (name: string) => {
      const p = join(t.dir, name);
      writeFileSync(p, Buffer.from('RIFF....WAVEfmt '));
      return p;
    };
    const [a, b] = [wav('a.wav'), wav('b.wav')];
    t.clearRequests();
    const ok = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '--reference-audio', a, '--reference-audio', b, '--reference-text', 'transcript of b'], { env: mgmt() });
    expect(ok.code).toBe(0);
    const refs = t.requests().filter((q) => q.path.endsWith('/audio/speech')).at(-1)!.body.input_references;
    expect(refs.map((r: any) => r.type)).toEqual(['input_audio', 'input_audio', 'text']);
    expect(refs[2].text).toBe('transcript of b');
    const before = t.requests().length;
    const bad = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '--reference-text', 'orphan', '--reference-audio', a, '--reference-audio', b], { env: mgmt() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/must come right after the --reference-audio clip/);
    expect(t.requests().length).toBe(before);
  });
});

describe('echoes and enumerations', () => {
  it('Responses echo prompt-cache controls; fast reads back as priority; enumerations are checked', async () => {
    // spec: responses.echo, responses.service-tier, responses.truncation, responses.modalities, chat.modalities, chat.route, chat.stop-conditions
    const r = await post(t, '/v1/responses', { model: 'local/echo', input: 'hi', prompt_cache_options: { mode: 'explicit', ttl: '1h' }, service_tier: 'fast' });
    expect(r.status).toBe(200);
    expect(r.json.prompt_cache_options).toEqual({ mode: 'explicit', ttl: '1h' });
    expect(r.json.service_tier).toBe('priority');
    const chat = await post(t, '/v1/chat/completions', { model: 'local/echo', messages: [{ role: 'user', content: 'x' }], service_tier: 'fast' });
    expect(chat.json.service_tier).toBe('priority');
    for (const [path, extra, field] of [
      ['/v1/chat/completions', { stop_server_tools_when: [] }, /stop_server_tools_when/],
      ['/v1/chat/completions', { route: 'cheapest' }, /route must be one of fallback, sort/],
      ['/v1/chat/completions', { modalities: ['video'] }, /modalities must be an array of text, image, audio/],
      ['/v1/responses', { truncation: 'sometimes' }, /truncation must be one of auto, disabled/],
      ['/v1/responses', { modalities: ['audio'] }, /modalities must be an array of text, image/],
    ] as const) {
      const body = path === '/v1/responses' ? { model: 'local/echo', input: 'x', ...extra } : { model: 'local/echo', messages: [{ role: 'user', content: 'x' }], ...extra };
      const res = await post(t, path, body);
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.json.error.message).toMatch(field);
    }
  });
});

describe('batch usage when a batch does not complete', () => {
  it('an expired batch reports and pays for the requests that ran, at the batch price, once; a failed one ran none', async () => {
    // spec: batch.usage-sum
    const ws = await t.admin('workspaces', {});
    const key = ws.api_key;
    await t.admin('batches', { delay_ms: 150 });
    try {
      const requests = Array.from({ length: 30 }, (_, i) => ({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `hello ${i}` }] } }));
      const created = await post(t, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'local/echo', requests }, {}, key);
      // Some done, the rest held (checked in this process, so the engine takes no step in between): part done when its
      // window ends, however slow the machine (after a 1.2 s sleep none was done, or all, at load 30).
      expect(await until(() => (t.emu.batches.store.get(created.json.id)?.request_counts.completed ?? 0) >= 3)).toBe(true);
      t.emu.batches.opts.delayMs = 600_000;
      await t.admin('clock', { advance_seconds: 25 * 3600 });
      const batch = await fetch(`${t.apiRoot}/v1/batches/${created.json.id}`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json() as any);
      expect(batch.status).toBe('expired');
      const done = batch.results.filter((r: any) => r.error === null);
      expect(done.length).toBeGreaterThan(0);
      expect(done.length).toBeLessThan(30);
      expect(batch.request_counts.completed).toBe(done.length);
      const itemCost = done.reduce((sum: number, r: any) => sum + r.response.body.usage.cost, 0);
      // Each item's usage.cost is its charge, at the batch price: the batch's cost is their sum.
      expect(batch.usage.cost).toBeCloseTo(itemCost, 9);
      const credits = await fetch(`${t.apiRoot}/v1/credits`, { headers: { authorization: `Bearer ${ws.management_key}` } }).then((r) => r.json() as any);
      expect(credits.data.total_usage).toBeCloseTo(batch.usage.cost, 12);
      await t.admin('batches', { delay_ms: 0 });
      const failed = await post(t, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'local/echo', requests: [{ custom_id: 'x', body: { model: 'other/model', messages: [] } }] }, {}, key);
      let f: any;
      // Until it has failed (40 looks, 4 s, can be too few on a loaded machine).
      for (const end = Date.now() + waitBound(); f?.status !== 'failed' && Date.now() < end; ) {
        await new Promise((r) => setTimeout(r, 100));
        f = await fetch(`${t.apiRoot}/v1/batches/${failed.json.id}`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json());
      }
      expect(f.status).toBe('failed');
      expect(f.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, cost: 0 });
    } finally {
      await t.admin('batches', { delay_ms: 0 });
    }
  });
});
