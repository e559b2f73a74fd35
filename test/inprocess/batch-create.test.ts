/** `router batch create` on both flavours: input checks, refusals, a batch run to its results; and the emulator's create rules over raw HTTP. */
import { readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { post } from '../support/cli-env.js';
import { FLAVORS } from '../support/batch-jobs.js';
import { batchCliEnv, requestLine as line } from '../support/batch-cli.js';

describe.each(FLAVORS)('%s flavour', (flavor) => {
  const { t, BP, file, batchPosts } = batchCliEnv(flavor);

  describe('router batch create', () => {
    it('creates a batch from JSONL, prints its id, and the batch runs to completion', async () => {
      // spec: batch.results-terminal, batch.failed-item, batch.usage-sum
      const f = file('ok.jsonl', [line('a', 'first'), line('b', 'second'), line('c', 'third', { temperature: 7 })]);
      const r = await t.run(['batch', 'create', f, '--model', 'local/echo']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^batch_\w+\n$/);
      const id = r.stdout.trim();
      const req = batchPosts()[0]!;
      expect(Object.keys(req.headers)).toContain('content-type');

      const out = join(t.dir, 'ok-results.jsonl');
      const w = await t.run(['batch', 'get', id, '--watch', '--interval', '0.05', '--results', out]);
      expect(w.code).toBe(0);
      expect(w.stdout).toBe('');
      const results = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(results.map((x) => x.custom_id).sort()).toEqual(['a', 'b', 'c']);
      const a = results.find((x) => x.custom_id === 'a');
      expect(a.response.status_code).toBe(200);
      expect(a.response.body.choices[0].message.content).toBe('first');
      const c = results.find((x) => x.custom_id === 'c');
      // Deployed: exactly one of response and error is non-null (deployment notes); api.md: response is an object.
      if (flavor === 'deployed') expect(c.response).toBeNull();
      else expect(c.response).toMatchObject({ status_code: 400, body: { error: { code: 400 } } });
      expect(c.error).toMatchObject({ type: 'invalid_request_error', error_type: 'invalid_request' });
      expect(c.error.message).toMatch(/temperature/);

      const got = JSON.parse((await t.run(['batch', 'get', id, '--json'])).stdout);
      expect(got.status).toBe('completed');
      expect(got.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
      expect(got.usage.total_tokens).toBe(got.usage.prompt_tokens + got.usage.completion_tokens);
      expect(got.usage.cost).toBeGreaterThan(0);
      expect(got.results).toHaveLength(3);
    });

    it('accepts the {custom_id, method, url, body} format, takes the endpoint from url and the model from the bodies', async () => {
      // spec: batch.create.202
      const lines = ['x', 'y'].map((id) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/embeddings', body: { model: 'local/embed', input: `text ${id}` } }));
      const r = await t.run(['batch', 'create', file('emb.jsonl', lines), '--json']);
      expect(r.code).toBe(0);
      const b = JSON.parse(r.stdout);
      expect(b).toMatchObject({ object: 'batch', endpoint: '/v1/embeddings', model: 'local/embed', status: 'validating', request_counts: { total: 2 } });
      const sent = batchPosts()[0]!.body;
      expect(Object.keys(sent)).toEqual(['endpoint', 'model', 'completion_window', 'requests']);
      expect(sent.requests[0]).toEqual({ custom_id: 'x', body: { model: 'local/embed', input: 'text x' } });
    });

    it('a failure after the batch was made (a --jq error) still names the batch: its id is never lost', async () => {
      const lines = [JSON.stringify({ custom_id: 'a', body: { messages: [{ role: 'user', content: 'x' }] } })];
      for (const jq of ['error("x")', '.id | tonumber']) {
        const r = await t.run(['batch', 'create', file('jq-fails.jsonl', lines), '--model', 'local/echo', '--jq', jq]);
        expect(r.code).toBe(1);
        const id = /^batch (batch_\w+) was created \(router batch get \1\)$/m.exec(r.stderr)?.[1];
        expect(id, r.stderr).toBeDefined();
        expect(r.stderr).toMatch(/^error: --jq: /);
        expect((await t.run(['batch', 'get', id!, '--json'])).code).toBe(0);
      }
    });

    it('reads requests from stdin with "-" and sends provider preferences', async () => {
      const r = await t.run(['batch', 'create', '-', '--model', 'local/echo', '--provider-only', 'local-alpha', '--no-fallbacks', '--watch', '--interval', '0.05', '--results'], {
        input: [line('s1', 'from stdin'), line('s2', 'again')].join('\n'),
      });
      expect(r.code).toBe(0);
      const results = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(results.map((x) => x.response.body.choices[0].message.content).sort()).toEqual(['again', 'from stdin']);
      expect(batchPosts()[0]!.body.provider).toEqual({ only: ['local-alpha'], allow_fallbacks: false });
    });

    it('reports every bad line with its number and sends nothing', async () => {
      const f = file('bad.jsonl', ['{"custom_id":"a","body":{}}', 'not json', '[1,2]', '{"body":{}}', '{"custom_id":"","body":{}}', '{"custom_id":"a","body":{}}', '{"custom_id":"z"}', '{"custom_id":"q","body":"x"}']);
      const r = await t.run(['batch', 'create', f, '--model', 'local/echo']);
      expect(r.code).toBe(2);
      const errs = r.stderr.trim().split('\n');
      expect(errs).toEqual([
        expect.stringMatching(/bad\.jsonl:2: not JSON/),
        expect.stringMatching(/bad\.jsonl:3: not a JSON object/),
        expect.stringMatching(/bad\.jsonl:4: missing custom_id/),
        expect.stringMatching(/bad\.jsonl:5: empty custom_id/),
        expect.stringMatching(/bad\.jsonl:6: duplicate custom_id "a" \(first on line 1\)/),
        expect.stringMatching(/bad\.jsonl:7: missing body/),
        expect.stringMatching(/bad\.jsonl:8: body must be a JSON object/),
      ]);
      expect(t.requests()).toHaveLength(0);
    });

    it('a body.model of the wrong shape is a bad line: refused by --dry-run as by the real run, before any budget, nothing sent', async () => {
      const f = file('bad-model.jsonl', [line('a', 'x', { model: 'bad' }), line('b', 'y', { model: 5 })]);
      const said = `error: ${f}:1: body.model must look like <author>/<slug>, got "bad"\nerror: ${f}:2: body.model must look like <author>/<slug>, got 5\n`;
      for (const args of [['batch', 'create', f, '--dry-run'], ['batch', 'create', f], ['batch', 'create', f, '--model', 'local/echo'], ['batch', 'run', f, '--dry-run']]) {
        const r = await t.run(args, { env: { ROUTER_DAILY_BUDGET: '1' } });
        expect(r, args.join(' ')).toMatchObject({ code: 2, stdout: '', stderr: said });
      }
      expect(t.requests().filter((q) => q.path.includes('/batches'))).toHaveLength(0);
    });

    it('refuses bodies that disagree on the model unless --model is given, and bodies that contradict --model', async () => {
      const f = file('models.jsonl', [line('a', 'x', { model: 'local/echo' }), line('b', 'y', { model: 'local/lorem' })]);
      const r = await t.run(['batch', 'create', f]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/different models \("local\/echo" on line 1, "local\/lorem" on line 2\), and a batch has one: make a file of each model's lines/);
      const r2 = await t.run(['batch', 'create', f, '--model', 'local/echo']);
      expect(r2.code).toBe(2);
      expect(r2.stderr).toMatch(/models\.jsonl:2: body\.model "local\/lorem" differs from --model "local\/echo"/);
      expect(t.requests()).toHaveLength(0);
    });

    it('refuses urls of different endpoints, a missing file, an empty file, a bad --endpoint', async () => {
      const mixed = file('mixed.jsonl', [JSON.stringify({ custom_id: 'a', url: '/v1/embeddings', body: {} }), JSON.stringify({ custom_id: 'b', url: '/v1/chat/completions', body: {} })]);
      expect((await t.run(['batch', 'create', mixed, '--model', 'local/echo'])).stderr).toMatch(/mixed\.jsonl:2: url "\/v1\/chat\/completions" differs from "\/v1\/embeddings" on line 1/);
      expect((await t.run(['batch', 'create', join(t.dir, 'none.jsonl')])).stderr).toMatch(/no such file/);
      expect((await t.run(['batch', 'create', file('blank.jsonl', [''])])).stderr).toMatch(/blank\.jsonl: no requests \(only blank lines\)\n$/);
      writeFileSync(join(t.dir, 'empty.jsonl'), '');
      expect((await t.run(['batch', 'create', join(t.dir, 'empty.jsonl')])).stderr).toMatch(/empty\.jsonl: no requests \(it is empty\)\n$/);
      expect((await t.run(['batch', 'create', '-', '--model', 'local/echo'], { input: '' })).stderr).toBe('error: stdin: no requests (it is empty)\n');
      const bad = await t.run(['batch', 'create', mixed, '--endpoint', '/v1/images']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/allowed choices/);
      expect(t.requests()).toHaveLength(0);
    });

    it('more than 5000 requests are refused before sending', async () => {
      // spec: batch.create.max-requests
      const lines = Array.from({ length: 5001 }, (_, i) => line(`r${i}`, 'x'));
      const r = await t.run(['batch', 'create', file('big.jsonl', lines), '--model', 'local/echo']);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`error: ${join(t.dir, 'big.jsonl')}: 5,001 requests: a batch holds at most 5,000 (router batch run splits a file into as many batches as it needs)\n`);
      expect(t.requests()).toHaveLength(0);
    });

    it('a provider that is not allowed gives 403 (exit 3); an empty balance gives 402 (exit 4)', async () => {
      // spec: batch.create.403, batch.create.402
      const f = file('p.jsonl', [line('a', 'x')]);
      const r = await t.run(['batch', 'create', f, '--model', 'local/echo', '--provider-only', 'nowhere']);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/Provider "nowhere" is not allowed/);
      const ws = await t.admin('workspaces', { credits: 0 });
      const r2 = await t.run(['batch', 'create', f, '--model', 'local/echo'], { env: { ROUTER_API_KEY: ws.api_key } });
      expect(r2.code).toBe(4);
    });

    it('a budget refusal of a batch names the fix: max_tokens per line, or --ignore-budget', async () => {
      const f = file('budget.jsonl', [line('a', 'x'), line('b', 'y', { max_tokens: 5 })]);
      const r = await t.run(['batch', 'create', f, '--model', 'local/echo'], { env: { ROUTER_DAILY_BUDGET: '0.001', ROUTER_STATE_DIR: join(t.dir, `budget-${flavor}`) } });
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/nothing was submitted; set max_tokens on its lines \(1 request sets none, so it is bounded by the model's \d+ tokens\), or pass --ignore-budget\n$/);
      expect(batchPosts()).toHaveLength(0);
    });

    it('results written with failed requests among them say so on stderr, as batch run does (exit 0: the batch completed)', async () => {
      const lines = [
        JSON.stringify({ custom_id: 'bad', body: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 99_999_999 } }),
        JSON.stringify({ custom_id: 'good', body: { messages: [{ role: 'user', content: 'hi' }] } }),
      ];
      const out = join(t.dir, 'partly-failed.jsonl');
      const r = await t.run(['batch', 'create', file('partly-failed-in.jsonl', lines), '--model', 'local/echo', '--watch', '--interval', '0.05', '--results', out]);
      expect(r.code, r.stderr).toBe(0);
      const id = /(batch_\w+): 1 of 2 requests failed: see their "error" in the results\n/.exec(r.stderr)?.[1];
      expect(id, r.stderr).toBeDefined();
      const again = await t.run(['batch', 'get', id!, '--results', join(t.dir, 'partly-failed-2.jsonl')]);
      expect(again).toMatchObject({ code: 0, stderr: `${id}: 1 of 2 requests failed: see their "error" in the results\n` });
    });

    it('a batch with a non-text part fails validation: --watch exits 9 with the reason', async () => {
      // spec: batch.failed-reason
      const f = file('img.jsonl', [line('a', 'x'), JSON.stringify({ custom_id: 'b', body: { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] } })]);
      const r = await t.run(['batch', 'create', f, '--model', 'local/echo', '--watch', '--interval', '0.05']);
      // The deployed service refuses the submission itself (400); api.md's fails the batch in validation.
      expect(r.code).toBe(flavor === 'deployed' ? 2 : 9);
      expect(r.stderr).toMatch(/request b: content part of type "image_url" is not allowed; batches are text only/);
    });
  });

  describe('emulator batch rules over raw HTTP', () => {
    it('endpoint and model must come before requests; missing custom_id 400; duplicate 422; bad window 400', async () => {
      // spec: batch.create.endpoint, batch.create.model, batch.create.custom-id, batch.create.window, batch.create.field-order
      const reqs = [{ custom_id: 'a', body: { messages: [{ role: 'user', content: 'x' }] } }];
      expect((await post(t, BP, `{"requests":${JSON.stringify(reqs)},"endpoint":"/v1/chat/completions","model":"local/echo"}`)).status).toBe(400);
      expect((await post(t, BP, { endpoint: '/v1/chat/completions', model: 'local/echo', requests: [{ body: {} }] })).json.error.message).toMatch(/no custom_id/);
      expect((await post(t, BP, { endpoint: '/v1/chat/completions', model: 'local/echo', requests: [...reqs, ...reqs] })).status).toBe(422);
      expect((await post(t, BP, { endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '48h', requests: reqs })).status).toBe(400);
      expect((await post(t, BP, { endpoint: '/v1/files', model: 'local/echo', requests: reqs })).status).toBe(400);
      expect((await post(t, BP, { endpoint: '/v1/chat/completions', model: '', requests: reqs })).status).toBe(400);
      expect((await post(t, BP, { endpoint: '/v1/chat/completions', model: 'local/echo', requests: [] })).status).toBe(400);
    });

    it('a body over 200 MB is refused with 413 and nothing is kept', async () => {
      // spec: batch.create.413
      const status = await new Promise<number>((resolve, reject) => {
        const u = new URL(`${t.apiRoot}${BP}`);
        const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', 'content-length': String(201 * 1024 * 1024) } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
          req.destroy();
        });
        req.on('error', reject);
        req.write('{"endpoint":"/v1/chat/completions","model":"local/echo","requests":[');
      });
      expect(status).toBe(413);
      const dirs = readdirSync(join(t.dir, 'state', 'batches')).filter((d) => d.startsWith('.'));
      expect(dirs).toEqual([]);
    });
  });
});
