import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { APIError, RouterClient } from '../../src/client/index.js';
import { startInProcessEnv } from '../support/inprocess-env.js';
import { waitBound } from '../support/until.js';
import { startedForAll } from '../support/for-all.js';

// Batch shapes as api.md's tables give them: an `object` row is never null; the 402 body of Get a
// batch is the batch metadata (its own `error` among it) with results null.
const t = startedForAll(() => startInProcessEnv());

const chatItem = (id: string, content: string, extra: Record<string, unknown> = {}) => ({ custom_id: id, body: { messages: [{ role: 'user', content }], ...extra } });
const create = (requests: unknown[], key?: string, model = 'local/echo') => t.call('POST', '/v1/batches', { endpoint: '/v1/chat/completions', model, requests }, key);

async function until(id: string, done: (b: any) => boolean, key?: string): Promise<{ status: number; json: any }> {
  // Until it gets there (500 looks, 5 s, can be too few on a loaded machine).
  for (const end = Date.now() + waitBound(); Date.now() < end; ) {
    const got = await t.call('GET', `/v1/batches/${id}`, undefined, key);
    if (done(got.json) || got.status !== 200) return got;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`batch ${id} never got there`);
}
const ended = (b: any) => ['completed', 'failed', 'expired', 'cancelled'].includes(b.status);

describe('field types of the batch tables', () => {
  it('usage is an object from creation on, all zeros until a request has run; then the aggregate', async () => {
    // spec: batch.usage-object
    const made = await create([chatItem('a', 'hello there')]);
    expect(made.status).toBe(202);
    expect(made.json.status).toBe('validating');
    expect(made.json.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 });
    const listed = await t.call('GET', '/v1/batches?limit=1');
    expect(listed.json.data[0].usage).toEqual(expect.objectContaining({ total_tokens: expect.any(Number) }));
    const done = await until(made.json.id, ended);
    expect(done.json.status).toBe('completed');
    expect(done.json.usage.total_tokens).toBeGreaterThan(0);
  });

  it('a failed request\'s item has a response object: its status code, request id and error body', async () => {
    // spec: batch.result-item, batch.failed-item
    const made = await create([chatItem('ok', 'fine'), chatItem('hot', 'too hot', { temperature: 7 })]);
    const done = await until(made.json.id, ended);
    const failed = done.json.results.find((r: any) => r.custom_id === 'hot');
    expect(failed.error).toMatchObject({ type: 'invalid_request_error', param: null, error_type: 'invalid_request' });
    expect(failed.response).toMatchObject({ status_code: 400, request_id: expect.any(String), body: { error: { code: 400, message: expect.stringMatching(/temperature/) } } });
    expect(done.json.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
  });
});

describe('the /v1/messages target (its request format is not shown)', () => {
  it('takes the messages format: system, max_tokens, stop_sequences and tools of its own; answers message results', async () => {
    const body = { system: 'be brief', max_tokens: 50, stop_sequences: ['zz'], tools: [{ name: 'f', input_schema: { type: 'object' } }], tool_choice: { type: 'auto' }, messages: [{ role: 'user', content: 'hello there' }] };
    const made = await t.call('POST', '/v1/batches', { endpoint: '/v1/messages', model: 'local/echo', requests: [{ custom_id: 'm', body }, { custom_id: 'no-cap', body: { messages: body.messages } }, { custom_id: 'zero-cap', body: { max_tokens: 0, messages: body.messages } }] });
    expect(made.status).toBe(202);
    const done = await until(made.json.id, ended);
    const [ok, noCap, zeroCap] = ['m', 'no-cap', 'zero-cap'].map((id) => done.json.results.find((r: any) => r.custom_id === id));
    expect(ok.response.body).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hello there' }], stop_reason: 'end_turn', stop_sequence: null });
    // The OpenAPI's MessagesRequest requires model and messages only: no max_tokens is answered, a max_tokens of 0 refused.
    expect(noCap.response.body).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'hello there' }] });
    expect(zeroCap.error.message).toMatch(/max_tokens/);
    expect(zeroCap.response.status_code).toBe(400);
  });
});

describe('402 on Get a batch', () => {
  it('keeps the batch\'s own error (an expired batch\'s reason), results null; batch get shows that reason', async () => {
    // spec: batch.get.402
    const ws = await t.admin('workspaces', { credits: 0.0000001 });
    await t.admin('batches', { delay_ms: 300 });
    try {
      const made = await create(['a', 'b', 'c', 'd', 'e', 'f'].map((id) => chatItem(id, 'write 300 words')), ws.api_key, 'local/lorem');
      expect(made.status).toBe(202);
      const running = await until(made.json.id, (b) => b.request_counts.completed >= 1, ws.api_key);
      // The rest held back, so that the batch is still running when its window ends, however slow the machine.
      await t.admin('batches', { delay_ms: 600_000 });
      // spec: batch.usage-object (the aggregate so far while it runs)
      if (running.json.status === 'in_progress') expect(running.json.usage.total_tokens).toBeGreaterThan(0);
      await t.admin('clock', { advance_seconds: 25 * 3600 });
      const got = await t.call('GET', `/v1/batches/${made.json.id}`, undefined, ws.api_key);
      expect(got.status).toBe(402);
      expect(got.json).toMatchObject({ id: made.json.id, object: 'batch', status: 'expired', results: null, error: { message: expect.stringMatching(/24h completion window/) } });
      // api.md's envelope rule: every non-2xx of a batch operation has error.code, the HTTP status.
      expect(got.json.error.code).toBe(402);

      const client = new RouterClient({ apiKey: ws.api_key, apiRoot: t.emu.apiRoot, maxRetries: 0 });
      const thrown = await client.batches.get(made.json.id).catch((e: unknown) => e);
      await client.close();
      expect(thrown).toBeInstanceOf(APIError);
      expect(thrown).toMatchObject({ status: 402, said: 'the finalized cost of the batch exceeds the available balance', request: expect.stringMatching(/^GET \S+\/batches\/batch_\w+$/), errorType: 'payment_required', body: { status: 'expired', results: null } });

      const env = { ROUTER_API_KEY: ws.api_key };
      const text = await t.run(['batch', 'get', made.json.id], { env, tty: { stdout: true } });
      expect(text.code).toBe(4);
      expect(text.stdout).toMatch(/error\s+The batch did not complete within the 24h completion window/);
      expect(text.stderr).toMatch(/^error: the finalized cost of batch_\w+ exceeds your balance \(the batch expired: The batch did not complete within the 24h completion window\): add credits/);
      const json = await t.run(['batch', 'get', made.json.id, '--json'], { env });
      expect(json.code).toBe(4);
      expect(JSON.parse(json.stdout)).toMatchObject({ status: 'expired', results: null, error: { message: expect.any(String) } });
    } finally {
      await t.admin('batches', { delay_ms: 0 });
    }
  });
});

describe('finalizing and cancelling are listed as in_progress', () => {
  it('a finalizing batch reads in_progress in a list (and matches that filter); Get a batch says finalizing', async () => {
    // spec: batch.list.collapsed
    await t.admin('batches', { delay_ms: 1000 });
    try {
      // The lists count only if the batch still says finalizing after them: a loaded machine can take longer than
      // its stay in finalizing between two calls (it then reads completed, rightly absent from the in_progress list).
      let seen = 0;
      for (let attempt = 0; attempt < 5 && !seen; attempt++) {
        const made = await create([chatItem('a', 'x')]);
        const got = await until(made.json.id, (b) => b.status === 'finalizing' || ended(b));
        if (got.json.status !== 'finalizing') continue;
        const listed = await t.call('GET', '/v1/batches?status=in_progress');
        const all = await t.call('GET', '/v1/batches');
        if ((await t.call('GET', `/v1/batches/${made.json.id}`)).json.status !== 'finalizing') continue;
        expect(listed.status).toBe(200);
        expect(listed.json.data.find((b: any) => b.id === made.json.id)?.status).toBe('in_progress');
        expect(all.json.data.find((b: any) => b.id === made.json.id)?.status).toBe('in_progress');
        seen++;
      }
      expect(seen, 'a batch seen finalizing before and after the lists').toBe(1);
    } finally {
      await t.admin('batches', { delay_ms: 0 });
    }
  });
});

describe('the 200 MB of a batch is 200,000,000 bytes', () => {
  /** The status of a create that declares `bytes` and sends only its start. */
  const declared = (bytes: number) =>
    new Promise<number | undefined>((resolve, reject) => {
      const u = new URL(`${t.emu.apiRoot}/v1/batches`);
      const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', 'content-length': String(bytes) } }, (res) => {
        res.resume();
        resolve(res.statusCode);
        req.destroy();
      });
      req.on('error', reject);
      req.write('{"endpoint":"/v1/chat/completions","model":"local/echo","requests":[');
      // A body within the limit is read as it comes: no answer until it is all there.
      setTimeout(() => {
        resolve(undefined);
        req.destroy();
      }, 1000).unref();
    });

  it('one byte over is 413 at once; exactly 200,000,000 is read', async () => {
    // spec: batch.create.413
    expect(await declared(200_000_001)).toBe(413);
    expect(await declared(200_000_000)).toBeUndefined();
  });
});
