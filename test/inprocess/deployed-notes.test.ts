import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startInProcessEnv } from '../support/inprocess-env.js';
import { FLAVORS, batchesPathOf } from '../support/batch-jobs.js';
import { SETTLE } from '../support/until.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startedForAll } from '../support/for-all.js';

// Statements of the deployment notes (shared/reference/openrouter-notes-not-in-spec.md) that the
// deployed flavour answers as written, and the spec flavour as api.md has it where the two differ.
describe.each(FLAVORS)('%s flavour', (flavor) => {
  const t = startedForAll(() => startInProcessEnv({ flavor }));

  const deployed = flavor === 'deployed';
  const batches = batchesPathOf(flavor);

  /** The batch once `done` holds of it. */
  async function batchWhen(id: string, done: (b: any) => boolean): Promise<any> {
    let got: any;
    await vi.waitFor(async () => {
      got = (await t.call('GET', `${batches}/${id}`)).json;
      expect(done(got)).toBe(true);
    }, SETTLE);
    return got;
  }

  /** A batch of one request: the deployed service refuses it at once (400); api.md's fails it in validation. */
  async function refusedBatch(endpoint: string, model: string, body: object, why: RegExp): Promise<void> {
    const made = await t.call('POST', batches, { endpoint, model, requests: [{ custom_id: 'r1', body }] });
    if (deployed) {
      expect(made.status).toBe(400);
      expect(made.json.error).toMatchObject({ code: 400, message: expect.stringMatching(why) });
      return;
    }
    expect(made.status).toBe(202);
    const ended = await batchWhen(made.json.id, (b) => b.status !== 'validating');
    expect(ended).toMatchObject({ status: 'failed', error: { message: expect.stringMatching(why) } });
  }

  describe('batches: text only, embeddings without input_type or provider', () => {
    it('an embeddings request with its own provider is refused, as one with input_type is', async () => {
      await refusedBatch('/v1/embeddings', 'local/embed', { input: 'hi', provider: { only: ['local-alpha'] } }, /^request r1: provider is not supported in batches$/);
      await refusedBatch('/v1/embeddings', 'local/embed', { input: 'hi', input_type: 'query' }, /^request r1: input_type is not supported in batches$/);
    });

    it('an embeddings input that is not strings or token ids is refused', async () => {
      await refusedBatch('/v1/embeddings', 'local/embed', { input: ['a', { type: 'image_url', image_url: { url: 'https://x/y.png' } }] }, /^request r1: input\[1\] must be a string or an array of token ids$/);
    });

    it('a Responses input_image or input_file given as an input item of its own is refused', async () => {
      await refusedBatch('/v1/responses', 'local/echo', { input: [{ type: 'input_image', image_url: 'https://x/y.png' }] }, /input_image" is not allowed; batches are text only/);
      await refusedBatch('/v1/responses', 'local/echo', { input: [{ type: 'input_file', file_url: 'https://x/y.pdf' }] }, /input_file" is not allowed/);
    });

    it('an image or file in a tool\'s output is refused: a Responses function_call_output, an Anthropic tool_result', async () => {
      const call = { type: 'function_call', call_id: 'c1', name: 'look', arguments: '{}' };
      await refusedBatch('/v1/responses', 'local/echo', { input: [call, { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] }, /input_image" is not allowed; batches are text only/);
      await refusedBatch('/v1/responses', 'local/echo', { input: [call, { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_file', file_url: 'https://x/y.pdf' }] }] }, /input_file" is not allowed/);
      const use = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'look', input: {} }] };
      const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }] };
      await refusedBatch('/v1/messages', 'local/echo', { max_tokens: 10, messages: [{ role: 'user', content: 'look' }, use, result] }, /image" is not allowed; batches are text only/);
    });

    it('text embeddings and token ids still run', async () => {
      const made = await t.call('POST', batches, { endpoint: '/v1/embeddings', model: 'local/embed', requests: [{ custom_id: 'a', body: { input: ['hi', [1, 2]] } }, { custom_id: 'b', body: { input: [3, 4] } }] });
      expect(made.status).toBe(202);
      const ended = await batchWhen(made.json.id, (b) => b.status === 'completed');
      expect(ended.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    });
  });

  describe('batches of a Google model: one response_format for all requests', () => {
    let gateway: Emulator;
    beforeAll(async () => {
      const yaml = `providers:\n  - { name: up, base_url: "${t.emu.apiRoot}/v1", api_key_env: UP_KEY, models: { google/gemini-test: local/echo, test/other: local/echo } }\n`;
      gateway = await startEmulator({ stateDir: join(t.dir, 'gateway'), port: 0, batchDelayMs: 0, flavor, gateway: { config: parseProviders(yaml, { UP_KEY: t.apiKey }) } });
    });
    afterAll(() => gateway.close());

    const schema = (order: 'ab' | 'ba') => ({ type: 'json_schema', json_schema: order === 'ab' ? { name: 'x', schema: { type: 'object' } } : { schema: { type: 'object' }, name: 'x' } });
    const ask = (response_format?: object) => ({ messages: [{ role: 'user', content: 'hi' }], ...(response_format ? { response_format } : {}) });
    async function submit(model: string, bodies: object[]): Promise<{ status: number; json: any }> {
      const res = await fetch(`${gateway.apiRoot}${batches}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ endpoint: '/v1/chat/completions', model, requests: bodies.map((body, i) => ({ custom_id: `r${i + 1}`, body })) }),
      });
      return { status: res.status, json: await res.json() };
    }
    async function validated(made: { status: number; json: any }): Promise<any> {
      let got: any;
      await vi.waitFor(async () => {
        const res = await fetch(`${gateway.apiRoot}${batches}/${made.json.id}`, { headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}` } });
        got = await res.json();
        expect(got.status).not.toBe('validating');
      }, SETTLE);
      return got;
    }

    it('a request whose response_format differs from the first is refused, naming both', async () => {
      const made = await submit('google/gemini-test', [ask(), ask(), ask({ type: 'json_object' })]);
      const why = 'request r3: its response_format differs from that of request r1; a batch of a Google model needs one response_format for all its requests';
      if (deployed) expect(made).toMatchObject({ status: 400, json: { error: { code: 400, message: why } } });
      else expect(await validated(made)).toMatchObject({ status: 'failed', error: { message: why } });
    });

    it('the same json_schema (its keys in any order) is one format; another model may mix them', async () => {
      for (const made of [await submit('google/gemini-test', [ask(schema('ab')), ask(schema('ba'))]), await submit('test/other', [ask(), ask({ type: 'json_object' })])]) {
        expect(made.status, JSON.stringify(made.json)).toBe(202);
        expect((await validated(made)).status).not.toBe('failed');
      }
    });
  });

  describe('batch results: a failed request', () => {
    it('deployed: exactly one of response and error is non-null; api.md: response an object always; batch run counts it failed', async () => {
      const lines = [{ custom_id: 'ok', body: { messages: [{ role: 'user', content: 'hi' }] } }, { custom_id: 'bad', body: { messages: [{ role: 'user', content: 'hi' }], temperature: 9 } }];
      const made = await t.call('POST', batches, { endpoint: '/v1/chat/completions', model: 'local/echo', requests: lines });
      const ended = await batchWhen(made.json.id, (b) => b.status === 'completed');
      const [ok, bad] = ended.results;
      expect(ok).toMatchObject({ custom_id: 'ok', response: { status_code: 200 }, error: null });
      expect(bad).toMatchObject({ custom_id: 'bad', error: { type: 'invalid_request_error', message: 'temperature must be between 0 and 2' } });
      if (deployed) expect(bad.response).toBeNull();
      else expect(bad.response).toMatchObject({ status_code: 400, body: { error: { code: 400 } } });

      const file = join(t.dir, `one-failed-${flavor}.jsonl`);
      const out = join(t.dir, `one-failed-${flavor}.out.jsonl`);
      writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      const run = await t.run(['batch', 'run', file, '--model', 'local/echo', '--interval', '0.05', '--results', out]);
      expect(run.stderr).toMatch(/1 of 2 requests failed/);
      const merged = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(merged.map((r) => [r.custom_id, r.error === null])).toEqual([['ok', true], ['bad', false]]);
    });
  });

  describe('decisions: instructions and criteria', () => {
    const rich = {
      c: { type: 'choice', instructions: { ask: 'which colour' }, criteria: { blue: null, red: ['warm', 'bright'] } },
      s: { type: 'score', instructions: ['how blue', 'lowest first'], criteria: [{ level: 'none' }, 'very'] },
      n: { type: 'noul', instructions: 'blue?', criteria: { true: { is: 'blue' }, false: 'not blue' } },
    };

    it('a JSON object or array, and a choice option without a description: deployed takes them (its SDK too), api.md a string', async () => {
      const res = await t.call('POST', '/alpha/decisions', { model: 'local/judge', state: 'The sky is blue.', questions: rich }, t.managementKey);
      if (!deployed) {
        expect(res).toMatchObject({ status: 400, json: { error: { code: 400, message: 'questions.c.instructions must be a string' } } });
        return;
      }
      expect(res.status).toBe(200);
      expect(res.json.answers.s.legend).toEqual({ '0': { level: 'none' }, '1': 'very' });
      const { OpenRouter } = await import('@openrouter/sdk');
      const sdk = new OpenRouter({ apiKey: t.managementKey, serverURL: `${t.emu.apiRoot}/v1`, retryConfig: { strategy: 'none' } });
      const origin = t.emu.apiRoot.replace(/\/api$/, '');
      const answer = await sdk.alpha.decisions.create({ decisionsRequest: { model: 'local/judge', state: 'The sky is blue.', questions: rich as never } }, { serverURL: origin });
      // The SDK parses the answer (its schemas are strict); its questions' keys may go in another order.
      expect(answer.answers).toMatchObject({ c: { type: 'choice', choice: expect.stringMatching(/^(blue|red)$/) }, s: { type: 'score', legend: { '0': { level: 'none' }, '1': 'very' } }, n: { type: 'noul' } });
    });

    it('router decide --questions sends them, and shows a JSON level as JSON', async () => {
      const file = join(t.dir, `rich-${flavor}.json`);
      writeFileSync(file, JSON.stringify({ s: rich.s }));
      const r = await t.run(['decide', '--model', 'local/judge', '--state-text', 'The sky is blue.', '--questions', file]);
      const asked = t.emu.requestLog.at(-1)!;
      expect(asked.path).toBe('/alpha/decisions');
      expect((asked.body as { questions: unknown }).questions).toEqual({ s: rich.s });
      if (!deployed) {
        expect(r.stderr).toMatch(/questions.s.instructions must be a string/);
        expect(r.code).not.toBe(0);
        return;
      }
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^s\tscore\t\d\.\d\d \((\{"level":"none"\}|very)\)\t/);
    });

    it('POST /v1/systemone: the same request and answer, deployed only (the SDK\'s systemOne)', async () => {
      const body = { model: 'local/judge', state: 'x', questions: { q: { type: 'noul', instructions: 'yes?' } } };
      const res = await t.call('POST', '/v1/systemone', body, t.managementKey);
      if (!deployed) {
        expect(res.status).toBe(404);
        return;
      }
      expect(res.status).toBe(200);
      expect(res.json.answers.q).toEqual((await t.call('POST', '/alpha/decisions', body, t.managementKey)).json.answers.q);
      const { OpenRouter } = await import('@openrouter/sdk');
      const sdk = new OpenRouter({ apiKey: t.managementKey, serverURL: `${t.emu.apiRoot}/v1`, retryConfig: { strategy: 'none' } });
      const answer = await sdk.systemOne.create({ decisionsRequest: body as never });
      expect(answer.answers.q).toEqual(res.json.answers.q);
    });

    it('POST /v1/systemone takes a bare id as TypeSafe\'s (jev-1.13 is typesafe/jev-1.13); /alpha/decisions does not', async () => {
      const body = { model: 'jev-1.13', state: 'x', questions: { q: { type: 'noul', instructions: 'yes?' } } };
      const res = await t.call('POST', '/v1/systemone', body, t.managementKey);
      if (!deployed) return expect(res.status).toBe(404);
      // The emulator has no TypeSafe model: what it names is the id the bare one maps to.
      expect([res.status, res.json.error.message]).toEqual([400, 'typesafe/jev-1.13 is not a valid model ID']);
      const alpha = await t.call('POST', '/alpha/decisions', body, t.managementKey);
      expect([alpha.status, alpha.json.error.message]).toEqual([400, 'model must look like <author>/<slug>, got "jev-1.13"']);
      const local = await t.call('POST', '/v1/systemone', { ...body, model: 'local/judge' }, t.managementKey);
      expect(local.status).toBe(200);
    });
  });
});
