/** `router batch list` (spec flavour) and `router batch get` on both flavours: paging, filters, 404, 402 until paid, results files. */
import { readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLAVORS } from '../support/batch-jobs.js';
import { batchCliEnv, requestLine as line } from '../support/batch-cli.js';
import { waitBound } from '../support/until.js';

describe.each(FLAVORS)('%s flavour', (flavor) => {
  const { t, BP, file } = batchCliEnv(flavor);

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
});
