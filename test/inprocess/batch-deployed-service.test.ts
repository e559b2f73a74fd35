/** `router batch` against the service as deployed: batches under /beta/batches with no listing, the local index, remembered places, lost creates. */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { post } from '../support/cli-env.js';
import { batchCliEnv, requestLine as line } from '../support/batch-cli.js';

describe.each(['deployed'] as const)('%s flavour', (flavor) => {
  const { t, BP, file, batchPosts } = batchCliEnv(flavor);

  describe('the service as deployed', () => {
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
