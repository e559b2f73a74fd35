import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, vi } from 'vitest';
import { BIN, type TestEnv } from '../helpers.js';
import { SETTLE } from './until.js';
import { closedStatus } from './run-process.js';

/**
 * The steps of a streamed answer cut by its user (Ctrl-C, `| head`), for any streaming command
 * (chat's in newcomer-eighth.test.ts, responses' in responses-cut.test.ts): each test says what it
 * expects of the exit, the note, the ledger line and the totals.
 */

/** The usage ledger's lines, in order (none before the first). */
export function ledger(t: TestEnv): Record<string, unknown>[] {
  const path = join(t.env.ROUTER_STATE_DIR!, 'usage.jsonl');
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : [];
}

/** `router ARGS` sent SIGINT once its answer is under way (its first text is out): the exit code and stderr. */
export async function interruptedMidStream(t: TestEnv, args: string[]): Promise<{ code: unknown; stderr: string }> {
  const child = t.spawn(args);
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  child.stdout!.once('data', () => child.kill('SIGINT'));
  const code = await closedStatus(child);
  return { code, stderr };
}

/**
 * Once the service knows the generation `id` (the emulator keeps a cancelled one once it sees the caller gone),
 * `usage --reconcile`: its exit code, then the ledger's total cost and the credits the service charged.
 */
export async function reconciled(t: TestEnv, id: string): Promise<{ code: number | null; total: number; charged: number }> {
  await vi.waitFor(async () => {
    const res = await fetch(`${t.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(res.status).toBe(200);
  }, SETTLE);
  const { code } = await t.run(['usage', '--reconcile']);
  const total = JSON.parse((await t.run(['usage', '--json'])).stdout).total.cost as number;
  const charged = JSON.parse((await t.run(['credits', '--json'], { env: { ROUTER_MANAGEMENT_KEY: t.managementKey } })).stdout).total_usage as number;
  return { code, total, charged };
}

/** `router ARGS | head -c 5` in bash: the pipeline's exit code and the ledger lines it added. */
export async function cutByHead(t: TestEnv, args: string[]): Promise<{ code: unknown; added: Record<string, unknown>[] }> {
  const before = ledger(t).length;
  const child = spawn('bash', ['-c', 'node "$BIN" "$@" | head -c 5 > /dev/null', 'sh', ...args], { env: { ...process.env, ...t.env, BIN }, stdio: ['ignore', 'pipe', 'pipe'] });
  const code = await new Promise((done) => child.on('close', done));
  return { code, added: ledger(t).slice(before) };
}
