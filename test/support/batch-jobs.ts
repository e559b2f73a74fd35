import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { CliEnv } from './cli-env.js';

/** The helpers of the `batch run` tests, spawned and in-process: workspaces, inputs, jobs, batches. */

export interface Space {
  env: Record<string, string>;
  key: string;
  management: string;
  state: string;
  workspace: string;
}

type Env = Pick<CliEnv, 'admin' | 'apiRoot' | 'dir'> & { emu?: CliEnv['emu'] };

/** The flavours of the emulator's batch resource, and where each keeps batches: every batch test runs against both. */
export const FLAVORS = ['spec', 'deployed'] as const;
export const batchesPathOf = (flavor: (typeof FLAVORS)[number]) => (flavor === 'deployed' ? '/beta/batches' : '/v1/batches');
let spaces = 0;

/** A workspace of its own (so its batches can be counted) and a state folder of its own, `prefix-N`. */
export async function newSpace(t: Env, prefix: string, credits = 100): Promise<Space> {
  const ws = await t.admin('workspaces', { credits });
  const state = join(t.dir, `${prefix}-${++spaces}`);
  return { env: { ROUTER_API_KEY: ws.api_key, ROUTER_STATE_DIR: state }, key: ws.api_key, management: ws.management_key, state, workspace: ws.workspace };
}

/** A requests file `name` in `dir`: lines c1..cN, each with `body(i)`. */
export function requestsFile(dir: string, name: string, count: number, body: (i: number) => object): string {
  const path = join(dir, name);
  writeFileSync(path, Array.from({ length: count }, (_, i) => JSON.stringify({ custom_id: `c${i + 1}`, body: body(i + 1) })).join('\n') + '\n');
  return path;
}

/** Every batch of the space's workspace, all pages. */
export async function batchesOf(t: Env, s: Space): Promise<any[]> {
  // A service without a listing (the deployed flavour): the emulator's own store, in this process.
  if (t.emu?.batches.flavor === 'deployed') return t.emu.batches.store.newestFirst(s.workspace).map((r) => ({ ...r }));
  const all: any[] = [];
  let after = '';
  for (;;) {
    const res = await fetch(`${t.apiRoot}/v1/batches?limit=100${after ? `&after=${after}` : ''}`, { headers: { authorization: `Bearer ${s.key}` } });
    const page = (await res.json()) as any;
    all.push(...page.data);
    if (!page.has_more) return all;
    after = page.last_id;
  }
}

/** Sets the faults of the space's workspace. */
export async function setFaults(t: Env, s: Space, specs: string[]): Promise<void> {
  const res = await fetch(`${t.apiRoot}/_emulator/faults`, { method: 'POST', headers: { authorization: `Bearer ${s.management}`, 'content-type': 'application/json' }, body: JSON.stringify({ faults: specs }) });
  expect(res.status).toBe(200);
}

/** The job records in the space's state folder. */
export function jobsIn(s: Space): any[] {
  const dir = join(s.state, 'jobs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((d) => existsSync(join(dir, d, 'job.json'))).map((d) => JSON.parse(readFileSync(join(dir, d, 'job.json'), 'utf8')));
}

export const jsonLines = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

/** The merged results are one per input line, in order, each from a batch of the job. */
export function expectMerged(out: string, count: number) {
  const rows = jsonLines(out);
  expect(rows.map((r) => r.custom_id)).toEqual(Array.from({ length: count }, (_, i) => `c${i + 1}`));
  return rows;
}

/** Every shard submitted exactly once: one batch per shard in the workspace, none extra. */
export async function expectExactlyOnce(t: Env, s: Space, job: any) {
  const batches = await batchesOf(t, s);
  expect(batches.map((b) => b.id).sort()).toEqual(job.shards.map((x: any) => x.batch_id).sort());
  expect(batches.reduce((sum, b) => sum + b.request_counts.total, 0)).toBe(job.shards.reduce((sum: number, x: any) => sum + x.count, 0));
}
