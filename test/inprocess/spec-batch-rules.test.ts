/**
 * The spec's batch rules (create, the batch object, result items, the list's pages), over raw HTTP against the
 * emulator. Each case is named by its rule id in the trace table of docs/conformance.md (`spec: <id>`).
 */
import { describe, expect, it } from 'vitest';
import { post, startCliEnv } from '../support/cli-env.js';
import { waitBound } from '../support/until.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startCliEnv());

describe('batch rules of the spec', () => {
  const get = async (path: string, key = t.apiKey) => {
    const res = await fetch(`${t.apiRoot}${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, json: (await res.json()) as any };
  };
  const settle = async (id: string, key = t.apiKey) => {
    // Until it is over, not 200 looks (4 s, too few on a loaded machine); the bound ends only a batch that never does.
    for (const end = Date.now() + waitBound(); Date.now() < end; ) {
      const b = await get(`/v1/batches/${id}`, key);
      if (!['validating', 'in_progress', 'finalizing'].includes(b.json.status)) return b;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`batch ${id} did not finish`);
  };
  const requests = [
    { custom_id: 'ok', body: { messages: [{ role: 'user', content: 'fine' }] } },
    { custom_id: 'bad', body: { messages: [{ role: 'user', content: 'x' }], temperature: 9 } },
  ];

  it('spec: batch.create, batch.object, batch.result-item, batch.failed-item', async () => {
    const created = await post(t, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', requests });
    expect(created.status).toBe(202);
    expect(created.json).toMatchObject({ object: 'batch', endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', status: 'validating', finalized_at: null, request_counts: { total: 2 } });
    expect(created.json.id).toMatch(/\w/);
    expect(Number.isInteger(created.json.created_at)).toBe(true);
    const done = await settle(created.json.id);
    expect(done.json).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 1, failed: 1 }, finalized_at: expect.any(Number), error: null });
    const byId = Object.fromEntries(done.json.results.map((r: any) => [r.custom_id, r]));
    expect(byId.ok).toMatchObject({ id: expect.any(String), error: null, response: { status_code: 200, request_id: expect.any(String), body: { object: 'chat.completion' } } });
    expect(byId.bad.error).toMatchObject({ type: expect.any(String), message: expect.stringMatching(/temperature/), param: null, error_type: 'invalid_request' });
    expect(done.json.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), cost: expect.any(Number), is_byok: false });
  });

  it('spec: batch.list.page, batch.list.default-limit, batch.list.created-strict', async () => {
    const ws = await t.admin('workspaces', { credits: 10 });
    const ids: string[] = [];
    for (let i = 0; i < 21; i++) {
      ids.push((await post(t, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'local/echo', requests: requests.slice(0, 1) }, {}, ws.api_key)).json.id);
      // Newest first is to the millisecond (an id's time part): each create in a millisecond of its own.
      await new Promise((r) => setTimeout(r, 2));
    }
    const page = (await get('/v1/batches', ws.api_key)).json;
    expect(page).toMatchObject({ object: 'list', has_more: true, first_id: ids[20], last_id: ids[1] });
    expect(page.data).toHaveLength(20);
    expect(page.data.some((b: any) => 'results' in b)).toBe(false);
    const last = (await get(`/v1/batches?after=${page.last_id}`, ws.api_key)).json;
    expect(last).toMatchObject({ has_more: false, first_id: ids[0], last_id: ids[0] });
    const first = await get(`/v1/batches/${ids[0]}`, ws.api_key);
    const at = first.json.created_at as number;
    const count = async (q: string) => (await get(`/v1/batches?limit=100&${q}`, ws.api_key)).json.data.filter((b: any) => b.created_at === at).length;
    const sameSecond = await count('');
    expect(await count(`created_after=${at}`)).toBe(0);
    expect(await count(`created_after=${at - 1}`)).toBe(sameSecond);
    expect(await count(`created_before=${at}`)).toBe(0);
    expect(await count(`created_before=${at + 1}`)).toBe(sameSecond);
  });
});
