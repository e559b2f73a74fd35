import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { heldByOthers, holdsDir } from '../../src/kit/spend/budget-hold.js';
import { appendUsage, ledgerPath } from '../../src/kit/spend/ledger.js';

// A `batch create` killed -9 after its answer named the batch (its create's record has the id) and before its hold became the
// batch's: the next budgeted check keeps the dead hold as `batch-ID.json` for 48 hours. Where `router batch get ID` recorded the
// batch's cost in between (no rerun), that hold stood beside the cost: counted twice. It goes where the ledger has the cost.
let dir: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-batch-recorded-'));
  env = { ROUTER_STATE_DIR: dir };
  mkdirSync(holdsDir(env), { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

/** The dead create's hold, its record naming `batch_id`. */
function deadCreate(batchId: string): void {
  const sentAt = new Date().toISOString();
  const record = join(dir, 'creates', 'k.json');
  mkdirSync(join(dir, 'creates'), { recursive: true });
  writeFileSync(record, JSON.stringify({ sent_at: sentAt, after: null, input: 'in.jsonl', batch_id: batchId }));
  writeFileSync(join(holdsDir(env), `${deadPid()}-abc.json`), JSON.stringify({ profile: 'default', usd: 0.5, pid: deadPid(), time: sentAt, batch: true, sent: { record, sent_at: sentAt } }));
}

const batchLine = (id: string, cost?: number) => ({ time: new Date().toISOString(), profile: 'default', command: 'batch get', endpoint: '/v1/batches', batch_id: id, ...(cost === undefined ? {} : { cost }) });

it('the batch\'s cost already in the ledger: the dead create\'s hold goes, in `router usage` and at the next check', () => {
  deadCreate('batch_1');
  // Other lines, many, before the batch's: the ledger is read in pieces.
  appendFileSync(ledgerPath(env), `${JSON.stringify({ time: new Date().toISOString(), profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', id: 'gen', cost: 0.001, model: 'x'.repeat(300) })}\n`.repeat(2000));
  expect(appendUsage(env, batchLine('batch_1', 0.01))).toBeUndefined();
  // Before: kept 0.5 both ways, and `batch-batch_1.json` left for 48 hours.
  expect(heldByOthers(env, 'default', undefined, Date.now(), false).kept).toBeUndefined();
  expect(heldByOthers(env, 'default').kept).toBeUndefined();
  expect(readdirSync(holdsDir(env))).toEqual([]);
});

it('never less: a batch with no cost in the ledger (another batch\'s, or its own without a cost) keeps the hold', () => {
  deadCreate('batch_1');
  expect(appendUsage(env, batchLine('batch_2', 0.01))).toBeUndefined();
  expect(appendUsage(env, batchLine('batch_1'))).toBeUndefined();
  expect(heldByOthers(env, 'default', undefined, Date.now(), false).kept).toBe(0.5);
  expect(heldByOthers(env, 'default').kept).toBe(0.5);
  expect(readdirSync(holdsDir(env))).toEqual(['batch-batch_1.json']);
});
