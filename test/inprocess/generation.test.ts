import { beforeEach, describe, expect, it } from 'vitest';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCliEnv } from '../support/cli-env.js';
import { answerValidator, violations } from '../conformance/openapi-fixtures.js';
import { startedForAll } from '../support/for-all.js';

// What a call really cost (issue 42): GET /v1/generation in the emulator, `router generation ID`,
// and `router usage --reconcile`, which puts the charged cost into the usage ledger.
const t = startedForAll(() => startCliEnv());

const ledger = () => join(t.env.ROUTER_STATE_DIR!, 'usage.jsonl');
const ledgerLines = () => readFileSync(ledger(), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const getGeneration = (id: string, key = t.apiKey) => fetch(`${t.apiRoot}/v1/generation?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${key}` } });
const chatId = async (args: string[], env: Record<string, string> = {}) => {
  const r = await t.run(['chat', '--no-stream', '--json', '--jq', '.id', ...args], { env });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
};

describe('GET /v1/generation in the emulator', () => {
  it('answers for a generation it served, in the OpenAPI shape: cost, native tokens, provider, latency, the referer', async () => {
    const r = await t.run(['chat', '--no-stream', '--json', '--model', 'local/lorem', 'write 9 words'], { env: { ROUTER_APP_URL: 'https://example.com/app' } });
    const answer = JSON.parse(r.stdout);
    const res = await getGeneration(answer.id);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(violations(answerValidator('get', '/generation'), body)).toBe('');
    expect(body.data).toMatchObject({
      id: answer.id,
      model: 'local/lorem',
      provider_name: answer.provider,
      total_cost: answer.usage.cost,
      native_tokens_prompt: answer.usage.prompt_tokens,
      native_tokens_completion: answer.usage.completion_tokens,
      streamed: false,
      http_referer: 'https://example.com/app',
      api_type: 'completions',
    });
    expect(body.data.latency).toBeGreaterThanOrEqual(0);
    // The workspace's UUID, as /v1/key and /v1/keys name it. Was: null.
    const key = (await (await fetch(`${t.apiRoot}/v1/key`, { headers: { authorization: `Bearer ${t.apiKey}` } })).json()) as { data: { workspace_id: string } };
    expect(body.data.workspace_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body.data.workspace_id).toBe(key.data.workspace_id);
  });

  it('streamed chat and Responses are kept too; another workspace, an unknown id: 404; no id: 400', async () => {
    const streamed = await t.run(['chat', '--stream', '--json', '--model', 'local/echo', 'hi']);
    const id = JSON.parse(streamed.stdout.trim().split('\n')[0]!).id;
    expect((await (await getGeneration(id)).json()).data).toMatchObject({ id, streamed: true });
    const resp = JSON.parse((await t.run(['responses', '--no-stream', '--json', '--model', 'local/echo', 'hi'])).stdout);
    expect((await getGeneration(resp.id)).status).toBe(200);
    const emb = JSON.parse((await t.run(['embed', '--json', '--model', 'local/embed', 'hi'])).stdout);
    expect((await (await getGeneration(emb.id)).json()).data).toMatchObject({ id: emb.id, api_type: 'embeddings', native_tokens_completion: 0 });
    const dec = JSON.parse((await t.run(['decide', '--json', '--model', 'local/judge', '--state-text', 'x', '--noul', 'a', 'b'], { env: { ROUTER_MANAGEMENT_KEY: t.managementKey } })).stdout);
    expect((await (await getGeneration(dec.id)).json()).data).toMatchObject({ id: dec.id, total_cost: dec.usage.cost });
    const other = await t.admin('workspaces', { credits: 1 });
    expect((await getGeneration(id, other.api_key)).status).toBe(404);
    expect((await getGeneration('gen-nope')).status).toBe(404);
    expect((await fetch(`${t.apiRoot}/v1/generation`, { headers: { authorization: `Bearer ${t.apiKey}` } })).status).toBe(400);
  });
});

describe('router generation ID', () => {
  it('prints cost, tokens, provider and latency; --json the record', async () => {
    const id = await chatId(['--model', 'local/echo', 'one two three']);
    const text = await t.run(['generation', id]);
    expect(text.code).toBe(0);
    const rows = Object.fromEntries(text.stdout.trim().split('\n').map((l) => l.split('\t')));
    expect(rows).toMatchObject({ id, model: 'local/echo', provider: expect.stringMatching(/^local-/), cost: expect.stringMatching(/^\d+\.\d+$/), finish: 'stop', streamed: 'no' });
    expect(rows.tokens).toMatch(/^prompt \d+, completion 3$/);
    expect(rows.latency).toMatch(/^\d+ ms \(generation \d+ ms\)$/);
    const json = await t.run(['generation', id, '--json', 'total_cost,native_tokens_completion']);
    expect(JSON.parse(json.stdout)).toEqual({ total_cost: expect.any(Number), native_tokens_completion: 3 });
  });

  it('an id the service does not know: the request named, exit 5; a malformed one: exit 2, nothing sent', async () => {
    expect(await t.run(['generation', 'gen-nope'])).toMatchObject({ code: 5, stdout: '', stderr: 'error: GET /api/v1/generation?id=gen-nope: 404 Not Found: Generation gen-nope not found\n' });
    t.clearRequests();
    expect(await t.run(['generation', 'two words'])).toMatchObject({ code: 2, stdout: '' });
    expect(t.requests()).toHaveLength(0);
  });
});

describe('router usage --reconcile', () => {
  beforeEach(() => t.clearRequests());

  it('fills in the charged cost of ledger lines by their generation id: bounded, resumable, --json, a summary on stderr', async () => {
    // The ledger keeps each call's generation id.
    const ids = [await chatId(['--model', 'local/lorem', 'write 5 words']), await chatId(['--model', 'local/lorem', 'write 7 words'])];
    const kept = ledgerLines().filter((l) => ids.includes(l.id));
    expect(kept.map((l) => l.id)).toEqual(ids);
    // A call whose answer reported no cost (as a cut stream's does): the service knows what it charged.
    const charged = (await (await getGeneration(ids[1]!)).json()).data.total_cost as number;
    const third = await chatId(['--model', 'local/lorem', 'write 9 words']);
    const thirdCharged = (await (await getGeneration(third)).json()).data.total_cost as number;
    const lines = readFileSync(ledger(), 'utf8').split('\n').filter((l) => !l.includes(third));
    const { writeFileSync } = await import('node:fs');
    writeFileSync(ledger(), lines.join('\n'));
    appendFileSync(ledger(), `${JSON.stringify({ time: new Date().toISOString(), profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', model: 'local/lorem', id: third })}\n`);
    // An id the service does not know, of a call long past: marked, never asked about again.
    const old = new Date(Date.now() - 3 * 3600_000).toISOString();
    appendFileSync(ledger(), `${JSON.stringify({ time: old, profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', id: 'gen-gone', cost: 0.5 })}\n`);
    const before = JSON.parse((await t.run(['usage', '--json'])).stdout).total;

    const first = await t.run(['usage', '--reconcile', '--limit', '2', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const r1 = JSON.parse(first.stdout);
    expect(r1.checked).toBe(2);
    expect(r1.left).toBeGreaterThan(0);
    expect(first.stderr).toMatch(/^reconciled \d calls? of profile "default".*; \d+ left(: run router usage --reconcile again|, 2 a run: run router usage --reconcile --limit \d+ to ask them all, or again as it is to ask the next 2)\n$/);

    let last = r1;
    for (let i = 0; i < 10 && last.left > 0; i++) last = JSON.parse((await t.run(['usage', '--reconcile', '--limit', '2', '--json'])).stdout);
    expect(last.left).toBe(0);
    const again = await t.run(['usage', '--reconcile', '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ checked: 0, left: 0 });
    expect(again.stderr).toMatch(/reconciled 0 calls .*none left/);

    const marks = ledgerLines().filter((l) => l.reconciles);
    expect(marks.find((l) => l.reconciles === 'gen-gone')).toMatchObject({ real_cost: null, cost: 0 });
    expect(marks.find((l) => l.reconciles === third)).toMatchObject({ real_cost: thirdCharged, cost: thirdCharged });
    expect(marks.find((l) => l.reconciles === ids[1])).toMatchObject({ real_cost: charged, cost: 0 });
    // Totals count the charged cost, and no call twice.
    const after = JSON.parse((await t.run(['usage', '--json'])).stdout).total;
    expect(after.calls).toBe(before.calls);
    expect(after.total_tokens).toBe(before.total_tokens);
    expect(after.cost).toBeCloseTo(before.cost + thirdCharged, 10);
  });

  it('--limit goes with --reconcile', async () => {
    expect(await t.run(['usage', '--limit', '5'])).toMatchObject({ code: 2, stderr: 'error: --limit goes with --reconcile\n' });
  });
});

describe('router generation of a record router serve made again after a kill -9', () => {
  it('says it was recovered, and that only its cost and time are known', async () => {
    const id = await chatId(['--model', 'local/echo', 'hi']);
    // The record as a start makes it from a charge left unrecorded (charged-generations.ts): the fields it could not know zeroed.
    const file = join(t.dir, 'state', 'generations.jsonl');
    await t.restart({
      down: async () => {
        const line = JSON.parse(readFileSync(file, 'utf8').trim().split('\n').find((l) => l.includes(id))!);
        line.id = line.data.id = `${id}x`;
        Object.assign(line.data, { model: 'unknown', provider_name: null, tokens_prompt: 0, tokens_completion: 0, latency: 0, generation_time: 0, recovered: true });
        appendFileSync(file, `${JSON.stringify(line)}\n`);
      },
    });
    const r = await t.run(['generation', `${id}x`]);
    expect(r.code, r.stderr).toBe(0);
    // Old code: a line like any other generation's, 0 tokens and 0 ms said as if measured.
    expect(r.stdout).toContain('recovered\tyes: made again from its charge after router serve was killed; only its cost and time are known\n');
    expect((await t.run(['generation', id])).stdout).not.toContain('recovered');
  });
});
