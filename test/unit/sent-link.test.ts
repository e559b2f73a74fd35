import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { heldByOthers, holdsDir } from '../../src/kit/spend/budget-hold.js';
import { appendUsage } from '../../src/kit/spend/ledger.js';
import { linkSent, SKEW_MS, type SeenBatch } from '../../src/kit/spend/sent-link.js';

// The rules by which a kept `batch-sent-…` hold is joined to a batch seen: the create's shape, made between its send and its end
// (within the clocks' skew), one to one, never a batch answered to its own create; a batch whose cost is recorded settles it at once.
let dir: string;
let env: NodeJS.ProcessEnv;
const ROOT = 'http://127.0.0.1:4000/api';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-sent-link-'));
  env = { ROUTER_STATE_DIR: dir };
  mkdirSync(holdsDir(env), { recursive: true });
  mkdirSync(join(dir, 'creates'), { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;
const sentAt = new Date(Date.now() - 60_000).toISOString();

/** A create killed unanswered, its hold seen kept (`batch-sent-…`); `shape` over the record's. */
function keptSend(key: string, shape: Record<string, unknown> = {}, usd = 0.5): string {
  const record = join(dir, 'creates', `${key}.json`);
  writeFileSync(record, JSON.stringify({ sent_at: sentAt, after: 'unlisted', input: 'in.jsonl', api_root: 'http://localhost:4000/api', endpoint: '/v1/chat/completions', model: 'local/echo', count: 3, ...shape }));
  writeFileSync(join(holdsDir(env), `${deadPid()}-${key}.json`), JSON.stringify({ profile: 'default', usd, pid: deadPid(), time: sentAt, batch: true, sent: { record, sent_at: sentAt } }));
  heldByOthers(env, 'default');
  return record;
}

const batch = (id: string, more: Partial<SeenBatch> = {}): SeenBatch => ({ id, endpoint: '/v1/chat/completions', model: 'local/echo', created_at: Math.floor(Date.now() / 1000) - 30, request_counts: { total: 3 }, ...more });
const holds = () => readdirSync(holdsDir(env)).filter((n) => n.startsWith('batch-')).map((n) => (n.startsWith('batch-sent-') ? 'sent' : n)).sort();
const none = () => new Set<string>();

it('the batch that fits takes the hold, and the create\'s record names it (the loopback root spelled either way)', () => {
  const record = keptSend('a');
  expect(holds()).toEqual(['sent']);
  expect(linkSent(env, ROOT, [batch('b_other', { request_counts: { total: 4 } }), batch('b_1')], none)).toEqual(['b_1']);
  expect(holds()).toEqual(['batch-b_1.json']);
  expect(JSON.parse(readFileSync(record, 'utf8')).batch_id).toBe('b_1');
  expect(heldByOthers(env, 'default').kept).toBe(0.5);
  // Its cost recorded: the hold goes (counted once).
  expect(appendUsage(env, { time: new Date().toISOString(), profile: 'default', command: 'batch get', endpoint: '/v1/batches', batch_id: 'b_1', cost: 0.01 })).toBeUndefined();
  expect(holds()).toEqual([]);
});

it('another shape, another service, made before the send or after the create ended, or answered to its own create: not joined', () => {
  keptSend('a');
  const early = Math.floor((Date.parse(sentAt) - SKEW_MS) / 1000) - 5;
  const late = Math.floor((Date.now() + SKEW_MS) / 1000) + 5;
  const seen = [batch('m', { model: 'other' }), batch('e', { endpoint: '/v1/responses' }), batch('early', { created_at: early }), batch('late', { created_at: late })];
  expect(linkSent(env, ROOT, seen, none)).toEqual([]);
  expect(linkSent(env, 'http://127.0.0.1:4001/api', [batch('b')], none)).toEqual([]);
  expect(linkSent(env, ROOT, [batch('mine')], () => new Set(['mine']))).toEqual([]);
  expect(holds()).toEqual(['sent']);
});

it('one to one: two batches that fit one send, or one batch two sends, join none (the holds stay counted)', () => {
  keptSend('a');
  expect(linkSent(env, ROOT, [batch('b_1'), batch('b_2')], none)).toEqual([]);
  keptSend('c');
  expect(linkSent(env, ROOT, [batch('b_1')], none)).toEqual([]);
  expect(holds()).toEqual(['sent', 'sent']);
  expect(heldByOthers(env, 'default').kept).toBe(1);
});

it('a batch whose cost the ledger has already: the hold goes; a record of an older router (no shape) is left', () => {
  appendUsage(env, { time: new Date().toISOString(), profile: 'default', command: 'batch get', endpoint: '/v1/batches', batch_id: 'b_1', cost: 0.01 });
  const record = keptSend('a');
  expect(linkSent(env, ROOT, [batch('b_1')], none)).toEqual(['b_1']);
  expect(holds()).toEqual([]);
  expect(existsSync(record)).toBe(true);
  keptSend('old', { api_root: undefined });
  expect(linkSent(env, ROOT, [batch('b_2')], none)).toEqual([]);
  expect(holds()).toEqual(['sent']);
});
