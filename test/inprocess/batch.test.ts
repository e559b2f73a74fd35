import { readFileSync, writeFileSync, existsSync, readdirSync, mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { post, startCliEnv, type CliEnv } from '../support/cli-env.js';
import { batchesPathOf, FLAVORS } from '../support/batch-jobs.js';
import { until, waitBound } from '../support/until.js';
import { startedForAll } from '../support/for-all.js';

let t: CliEnv;
/** Where the flavour under test keeps batches (every test here runs against both flavours). */
let BP = '/v1/batches';

const line = (id: string, content: string, extra: Record<string, unknown> = {}) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content }], ...extra } });
function file(name: string, lines: string[]): string {
  const p = join(t.dir, name);
  writeFileSync(p, lines.join('\n') + '\n');
  return p;
}
const batchPosts = () => t.requests().filter((r) => r.path === BP && r.method === 'POST');

describe.each(FLAVORS)('%s flavour', (flavor) => {
  beforeAll(async () => {
    t = await startCliEnv({ flavor });
    BP = batchesPathOf(flavor);
  });
  afterAll(() => t.close());
  beforeEach(() => t.clearRequests());

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

  if (flavor === 'spec') describe('router batch list', () => {
    it('pages newest first, follows --all, filters by status and time, and refuses bad filters', async () => {
      // spec: batch.list.order, batch.list.limit, batch.list.after, batch.list.status, batch.list.created-digits, gen.workspace-scope
      const ws = await t.admin('workspaces', { credits: 10 });
      const env = { ROUTER_API_KEY: ws.api_key };
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await t.run(['batch', 'create', file(`l${i}.jsonl`, [line(`a${i}`, 'x')]), '--model', 'local/echo'], { env });
        ids.push(r.stdout.trim());
      }
      const page1 = JSON.parse((await t.run(['batch', 'list', '--limit', '2', '--json'], { env })).stdout);
      expect(page1.data.map((b: any) => b.id)).toEqual([ids[4], ids[3]]);
      expect(page1.has_more).toBe(true);
      expect(page1.data[0].results).toBeUndefined();
      const page2 = JSON.parse((await t.run(['batch', 'list', '--limit', '2', '--after', page1.last_id, '--json'], { env })).stdout);
      expect(page2.data.map((b: any) => b.id)).toEqual([ids[2], ids[1]]);
      const all = (await t.run(['batch', 'list', '--limit', '2', '--all', '--jsonl'], { env })).stdout.trim().split('\n').map((l) => JSON.parse(l).id);
      expect(all).toEqual([...ids].reverse());
      const tsv = (await t.run(['batch', 'list', '--limit', '1'], { env })).stdout;
      expect(tsv).toMatch(new RegExp(`^${ids[4]}\\t\\w+\\t/v1/chat/completions\\tlocal/echo\\t\\d/\\d/1\\t\\d{4}-`));
      // The default workspace's batches are not listed here.
      const other = JSON.parse((await t.run(['batch', 'list', '--json', '--limit', '100'])).stdout);
      expect(other.data.map((b: any) => b.id)).not.toContain(ids[0]);

      const future = JSON.parse((await t.run(['batch', 'list', '--created-after', '2100-01-01', '--json'], { env })).stdout);
      expect(future.data).toEqual([]);
      const past = JSON.parse((await t.run(['batch', 'list', '--created-before', '2100-01-01', '--json', '--limit', '100'], { env })).stdout);
      expect(past.data).toHaveLength(5);
      const sent = t.requests().filter((r) => r.path === '/v1/batches' && r.method === 'GET').at(-1)!;
      expect(sent.query.created_before).toEqual([String(Date.parse('2100-01-01') / 1000)]);

      // Once the five have ended (the emulator runs them meanwhile): every one listed by its status. After a fixed
      // pause, none might have, and an empty list passed.
      const statuses = async () => ((await (await fetch(`${t.apiRoot}/v1/batches?limit=100`, { headers: { authorization: `Bearer ${ws.api_key}` } })).json()) as any).data.map((b: any) => b.status);
      for (const end = Date.now() + waitBound(); Date.now() < end && !(await statuses()).every((s: string) => s === 'completed' || s === 'failed'); ) await new Promise((r) => setTimeout(r, 20));
      const done = JSON.parse((await t.run(['batch', 'list', '--status', 'completed', '--status', 'failed', '--json', '--limit', '100'], { env })).stdout);
      expect(done.data.map((b: any) => b.id).sort()).toEqual([...ids].sort());
      expect(done.data.every((b: any) => b.status === 'completed')).toBe(true);
      expect(JSON.parse((await t.run(['batch', 'list', '--status', 'in_progress', '--json'], { env })).stdout).data).toEqual([]);

      t.clearRequests();
      for (const args of [['--status', 'finalizing'], ['--status', 'cancelling'], ['--status', 'done'], ['--limit', '0'], ['--limit', '101'], ['--created-after', 'yesterday-ish'], ['--after', '']]) {
        const r = await t.run(['batch', 'list', ...args], { env });
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
      }
      expect(t.requests()).toHaveLength(0);
    });

    it('the emulator answers 400 to each invalid list query', async () => {
      // spec: batch.list.400, batch.list.limit, batch.list.status, batch.list.created-digits
      for (const q of ['limit=0', 'limit=abc', 'status=finalizing', 'status=nope', 'created_after=2026-01-01', 'after=', 'after=batch_unknown']) {
        const res = await fetch(`${t.apiRoot}/v1/batches?${q}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
        expect(res.status, q).toBe(400);
        expect((await res.json()).error.code).toBe(400);
      }
    });
  });

  describe('router batch get', () => {
    it('404 for an unknown id or another workspace\'s batch (exit 5)', async () => {
      // spec: batch.get.404, gen.workspace-scope
      const r = await t.run(['batch', 'create', file('mine.jsonl', [line('a', 'x')]), '--model', 'local/echo']);
      const ws = await t.admin('workspaces', {});
      const other = await t.run(['batch', 'get', r.stdout.trim()], { env: { ROUTER_API_KEY: ws.api_key } });
      expect(other.code).toBe(5);
      expect(other.stderr).toMatch(/no batch batch_\w+ in this workspace/);
      expect((await t.run(['batch', 'get', 'batch_nope'])).code).toBe(5);
    });

    it('402 until the balance covers the finalized cost, then the persisted results', async () => {
      // spec: batch.get.402
      const ws = await t.admin('workspaces', { credits: 0.00002 });
      const env = { ROUTER_API_KEY: ws.api_key };
      const lines = Array.from({ length: 4 }, (_, i) => line(`p${i}`, 'write 200 words'));
      const id = (await t.run(['batch', 'create', file('pay.jsonl', lines), '--model', 'local/lorem'], { env })).stdout.trim();
      const w = await t.run(['batch', 'get', id, '--watch', '--interval', '0.05', '--results', join(t.dir, 'pay-out.jsonl')], { env });
      expect(w.code).toBe(4);
      expect(w.stderr).toMatch(/finalized cost of batch_\w+ exceeds your balance: add credits, then run "router batch get batch_\w+" again/);
      expect(existsSync(join(t.dir, 'pay-out.jsonl'))).toBe(false);
      const raw = await fetch(`${t.apiRoot}${BP}/${id}`, { headers: { authorization: `Bearer ${ws.api_key}` } });
      expect(raw.status).toBe(402);
      const body = await raw.json();
      // api.md's envelope rule: the 402's {code, message} is the batch's error.
      expect(body).toMatchObject({ id, status: 'completed', results: null, error: { code: 402, message: expect.stringMatching(/^Insufficient credits: the finalized cost of batch batch_\w+ is \$[\d.]+, the balance is \$[\d.]+\. Add more credits, then get it again\.$/) } });

      await fetch(`${t.apiRoot}/_emulator/credits`, { method: 'POST', headers: { authorization: `Bearer ${ws.management_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 1 }) });
      const ok = await t.run(['batch', 'get', id, '--results', join(t.dir, 'pay-out.jsonl')], { env });
      expect(ok.code).toBe(0);
      expect(readFileSync(join(t.dir, 'pay-out.jsonl'), 'utf8').trim().split('\n')).toHaveLength(4);
    });

    it('an existing results file is left as it was when the run fails', async () => {
      const target = join(t.dir, 'keep.jsonl');
      writeFileSync(target, 'precious\n');
      const r = await t.run(['batch', 'get', 'batch_missing', '--results', target]);
      expect(r.code).toBe(5);
      expect(readFileSync(target, 'utf8')).toBe('precious\n');
      expect(readdirSync(t.dir).filter((f) => f.includes('keep.jsonl') && f.endsWith('.tmp'))).toEqual([]);
    });
  });

  describe('clock, expiry, retention and restarts', () => {
    const s = startedForAll(() => startCliEnv({ batchDelayMs: 150, flavor }));

    it('shows validating and in_progress while it runs, and survives a restart without running anything twice', async () => {
      // spec: batch.states, batch.create.persisted
      const lines = Array.from({ length: 8 }, (_, i) => line(`r${i}`, `message ${i}`));
      const p = join(s.dir, 'slow.jsonl');
      writeFileSync(p, lines.join('\n'));
      const first = JSON.parse((await s.run(['batch', 'create', p, '--model', 'local/echo', '--json'])).stdout);
      const id = first.id;
      expect(first.status).toBe('validating');
      // The deployed service has results null until completed; api.md's leaves them out.
      if (flavor === 'deployed') expect(first).toMatchObject({ results: null, usage: null });
      else expect(first.results).toBeUndefined();
      // Two done, then the rest held (checked in this process, so the engine takes no step in between): the batch still
      // runs when it is looked at and restarted, however slow the machine (a poll through the CLI can take longer than
      // the 8 items of 150 ms). The restarted emulator goes at its usual pace.
      expect(await until(() => (s.emu.batches.store.get(id)?.request_counts.completed ?? 0) >= 2)).toBe(true);
      s.emu.batches.opts.delayMs = 600_000;
      const seen = JSON.parse((await s.run(['batch', 'get', id, '--json'])).stdout);
      expect(seen.request_counts.completed).toBeGreaterThanOrEqual(2);
      expect(seen.status).toBe('in_progress');
      await s.restart();
      const w = await s.run(['batch', 'get', id, '--watch', '--interval', '0.1', '--results']);
      expect(w.code).toBe(0);
      const results = w.stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(results.map((r) => r.custom_id).sort()).toEqual(lines.map((_, i) => `r${i}`).sort());
      expect(new Set(results.map((r) => r.id)).size).toBe(8);
    });

    it('a batch past its 24h window expires (exit 9); results are gone after 30 days (410, exit 5)', async () => {
      // spec: batch.window-24h, batch.get.410
      const p = join(s.dir, 'exp.jsonl');
      writeFileSync(p, Array.from({ length: 20 }, (_, i) => line(`e${i}`, 'x')).join('\n'));
      const id = (await s.run(['batch', 'create', p, '--model', 'local/echo'])).stdout.trim();
      await s.admin('clock', { advance_seconds: 25 * 3600 });
      const w = await s.run(['batch', 'get', id, '--watch', '--interval', '0.05']);
      expect(w.code).toBe(9);
      expect(w.stderr).toMatch(/expired: The batch did not complete within the 24h completion window/);
      await s.admin('clock', { advance_seconds: 30 * 86400 });
      const gone = await s.run(['batch', 'get', id]);
      expect(gone.code).toBe(5);
      expect(gone.stderr).toMatch(/deleted after the 30-day retention/);
      const raw = await fetch(`${s.apiRoot}${BP}/${id}`, { headers: { authorization: `Bearer ${s.apiKey}` } });
      expect(raw.status).toBe(410);
    });

  });

  if (flavor === 'deployed') describe('the service as deployed', () => {
    it('keeps batches under /beta/batches with no listing: found once, remembered, and batch list shows the local index', async () => {
      const raw = (path: string) => fetch(`${t.apiRoot}${path}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
      expect((await raw('/beta/batches')).status).toBe(405);
      expect((await raw('/v1/batches')).status).toBe(404);
      const dir = join(t.dir, 'deployed-state');
      const env = { ROUTER_STATE_DIR: dir };
      const f = file('local-a.jsonl', [line('a', 'x'), line('b', 'y')]);
      const a = await t.run(['batch', 'create', f, '--model', 'local/echo', '--watch', '--interval', '0.05', '--results', join(t.dir, 'local-a-out.jsonl')], { env });
      expect(a.code, a.stderr).toBe(0);
      const idA = /created (batch_\w+)/.exec(a.stderr)![1]!;
      // Piped, the watch says each status it sees (a status, never "found").
      expect(a.stderr).toContain(`${idA} completed: 2 completed, 0 failed of 2`);
      expect(a.stderr).not.toMatch(/found/);
      // Found (a 404 at api.md's place made nothing), then remembered for this API root.
      expect(t.requests().filter((r) => r.method === 'POST').map((r) => r.path).at(-1)).toBe('/beta/batches');
      expect(JSON.parse(readFileSync(join(dir, 'batch-places.json'), 'utf8'))[t.apiRoot]).toMatchObject({ path: '/beta/batches' });
      t.clearRequests();
      const idB = (await t.run(['batch', 'create', file('local-b.jsonl', [line('c', 'z')]), '--model', 'local/echo'], { env })).stdout.trim();
      expect(t.requests().map((r) => `${r.method} ${r.path}`)).toEqual(['POST /beta/batches']);

      const list = await t.run(['batch', 'list', '--json'], { env });
      expect(list.code, list.stderr).toBe(0);
      expect(list.stderr).toMatch(/lists no batches: these are the ones made from this machine/);
      // --quiet in a script: the same list, no note.
      const quiet = await t.run(['batch', 'list', '--json', '--quiet'], { env });
      expect(quiet.stderr).toBe('');
      expect(quiet.stdout).toBe(list.stdout);
      const page = JSON.parse(list.stdout);
      expect(page.data.map((b: any) => b.id)).toEqual([idB, idA]);
      expect(page.data[1]).toMatchObject({ id: idA, input: f, model: 'local/echo', endpoint: '/v1/chat/completions', status: 'completed', request_counts: { total: 2, completed: 2, failed: 0 } });
      const done = JSON.parse((await t.run(['batch', 'list', '--json', '--status', 'completed'], { env })).stdout);
      expect(done.data.map((b: any) => b.id)).toEqual([idA]);
      expect((await t.run(['batch', 'list', '--limit', '1'], { env })).stdout).toMatch(new RegExp(`^${idB}\t`));
    });

    it('a batch this machine could not note in its index is said so at create: the listing will not show it', async () => {
      const dir = join(t.dir, 'unindexed-state');
      mkdirSync(join(dir, 'batches.jsonl'), { recursive: true }); // the index's name taken by a folder: not writable
      const r = await t.run(['batch', 'create', file('unindexed.jsonl', [line('a', 'x')]), '--model', 'local/echo'], { env: { ROUTER_STATE_DIR: dir } });
      expect(r.code, r.stderr).toBe(0);
      const id = r.stdout.trim();
      // Was: nothing said, and batch list then showed no batches.
      expect(r.stderr).toContain(`warning: ${id} is not in this machine's batch index (EISDIR): where the service lists no batches, batch list will not show it; keep its id\n`);
    });

    it('refuses a body.model other than the batch model, and non-text output, at submission (400)', async () => {
      const reqs = (body: object) => [{ custom_id: 'a', body: { messages: [{ role: 'user', content: 'x' }], ...body } }];
      const wrong = await post(t, BP, { endpoint: '/v1/chat/completions', model: 'local/echo', requests: reqs({ model: 'local/lorem' }) });
      expect(wrong.status).toBe(400);
      expect(wrong.json.error.message).toMatch(/body\.model "local\/lorem" does not equal the batch model/);
      expect((await post(t, BP, { endpoint: '/v1/chat/completions', model: 'local/echo', requests: reqs({ modalities: ['text', 'audio'] }) })).status).toBe(400);
    });

    it('usage is null until completed, and a batch that did not complete has results null', async () => {
      const made = await post(t, BP, { endpoint: '/v1/chat/completions', model: 'local/echo', requests: [{ custom_id: 'a', body: { messages: [{ role: 'user', content: 'x' }] } }] });
      expect(made.status).toBe(202);
      expect(made.json).toMatchObject({ status: 'validating', usage: null, results: null });
      await t.admin('clock', { advance_seconds: 25 * 3600 });
      const res = await fetch(`${t.apiRoot}${BP}/${made.json.id}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
      const b = (await res.json()) as any;
      expect(b.status).toBe('expired');
      expect(b.results).toBeNull();
    });

    it('batch create whose answer is lost says the batch may exist and cannot be looked for; nothing is sent twice', async () => {
      await t.admin('faults', { faults: ['malformed,times=1,path=/beta/batches,method=POST'] });
      const f = file('lost-create.jsonl', [line('a', 'x')]);
      const r = await t.run(['batch', 'create', f, '--model', 'local/echo'], { env: { ROUTER_STATE_DIR: join(t.dir, 'lost-create-state') } });
      await t.admin('faults', { faults: [] });
      expect(r.code).toBe(7);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/the answer to the upload could not be read \(.+\); the batch may exist\. sent at \d{4}-[\d-]+T[\d:.]+Z; this service lists no batches, so it cannot be looked for: sending .+lost-create\.jsonl again is refused \(exit 8\) unless --new, which may make \(and bill\) a second batch; see \S+\/docs\/real-service-batches\.md\n$/);
      expect(batchPosts()).toHaveLength(1);
      // Run again as it was: refused in one line, nothing sent; --new sends it knowingly.
      const again = await t.run(['batch', 'create', f, '--model', 'local/echo'], { env: { ROUTER_STATE_DIR: join(t.dir, 'lost-create-state') } });
      expect(again.code).toBe(8);
      expect(again.stdout).toBe('');
      expect(again.stderr).toMatch(/^error: an earlier create of .+lost-create\.jsonl with these options, sent at \d{4}-[\d-]+T[\d:.]+Z, was never answered, and this service lists no batches to find its batch by; to send it anyway \(it may be billed twice\): --new; see \S+\/docs\/real-service-batches\.md\n$/);
      expect(batchPosts()).toHaveLength(1);
      const sent = await t.run(['batch', 'create', f, '--model', 'local/echo', '--new'], { env: { ROUTER_STATE_DIR: join(t.dir, 'lost-create-state') } });
      expect(sent.code, sent.stderr).toBe(0);
      expect(sent.stdout).toMatch(/^batch_\w+\n$/);
      expect(batchPosts()).toHaveLength(2);
    });

    it('batches_path (profile) and ROUTER_BATCHES_PATH name the place outright: never looked for elsewhere', async () => {
      const env = { ROUTER_STATE_DIR: join(t.dir, 'named-state'), ROUTER_CONFIG_DIR: join(t.dir, 'named-config') };
      expect(await t.run(['config', 'set', 'batches_path', 'beta/batches'], { env })).toMatchObject({ code: 2, stderr: expect.stringMatching(/batches_path must be a path under the API root such as \/v1\/batches or \/beta\/batches/) });
      expect((await t.run(['config', 'set', 'batches_path', '/v1/batches'], { env })).code).toBe(0);
      t.clearRequests();
      const f = file('named.jsonl', [line('a', 'x')]);
      // The profile names api.md's place: the deployed service answers 404 there, and nothing else is tried.
      const wrong = await t.run(['batch', 'create', f, '--model', 'local/echo'], { env });
      expect(wrong.code).toBe(5);
      expect(t.requests().filter((r) => r.method === 'POST').map((r) => r.path)).toEqual(['/v1/batches']);
      // The environment goes before the profile.
      const right = await t.run(['batch', 'create', f, '--model', 'local/echo'], { env: { ...env, ROUTER_BATCHES_PATH: '/beta/batches' } });
      expect(right.code, right.stderr).toBe(0);
      expect(t.requests().filter((r) => r.method === 'POST').map((r) => r.path)).toEqual(['/v1/batches', '/beta/batches']);
    });

    it('a remembered place that no longer answers a create (404) is looked for again, and remembered anew', async () => {
      const dir = join(t.dir, 'moved-state');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'batch-places.json'), JSON.stringify({ [t.apiRoot]: { path: '/v1/batches', listing: true } }));
      const r = await t.run(['batch', 'create', file('moved.jsonl', [line('a', 'x')]), '--model', 'local/echo'], { env: { ROUTER_STATE_DIR: dir } });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(readFileSync(join(dir, 'batch-places.json'), 'utf8'))[t.apiRoot]).toMatchObject({ path: '/beta/batches', listing: false });
    });

    it('batch get of an id the service does not know names the URL it asked', async () => {
      const r = await t.run(['batch', 'get', 'batch_unknown']);
      expect(r.code).toBe(5);
      // Where the place is not known yet, both places asked are named.
      expect(r.stderr).toMatch(/\(asked GET (http:\/\/\S+\/api\/v1\/batches\/batch_unknown and )?http:\/\/\S+\/api\/beta\/batches\/batch_unknown\)\n$/);
      const known = await t.run(['batch', 'get', 'batch_unknown'], { env: { ROUTER_BATCHES_PATH: '/beta/batches' } });
      expect(known.stderr).toBe(`error: no batch batch_unknown in this workspace (asked GET ${t.apiRoot}/beta/batches/batch_unknown)\n`);
    });
  });
});
