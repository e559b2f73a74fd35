import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { startTestEnv } from '../helpers.js';
import { until } from '../support/until.js';
import { closedStatus } from '../support/run-process.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startTestEnv());
beforeEach(() => t.clearRequests());

const line = (id: string, content: string, extra: Record<string, unknown> = {}) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content }], ...extra } });

describe('clock, expiry, retention and restarts', () => {
  const s = startedForAll(() => startTestEnv({ batchDelayMs: 150 }));

  it('Ctrl-C during --watch stops polling, leaves the batch running and exits 130', async () => {
    const p = join(s.dir, 'int.jsonl');
    writeFileSync(p, Array.from({ length: 50 }, (_, i) => line(`i${i}`, 'x')).join('\n'));
    // Held: the batch still runs when the watch is stopped, however long a loaded machine takes to start the watch
    // (50 items of 150 ms were done before it, at load 30).
    await s.admin('batches', { delay_ms: 600_000 });
    const id = (await s.run(['batch', 'create', p, '--model', 'local/echo'])).stdout.trim();
    s.clearRequests();
    const child = s.spawn(['batch', 'get', id, '--watch', '--interval', '0.1']);
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    // Watching: it has asked for the batch twice.
    expect(await until(() => s.requests().filter((r) => r.path === `/v1/batches/${id}`).length >= 2)).toBe(true);
    child.kill('SIGINT');
    const code = await closedStatus(child);
    expect(code).toBe(130);
    expect(stderr).toMatch(new RegExp(`stopped watching; ${id} keeps running. Resume with: router batch get ${id} --watch`));
    const after = JSON.parse((await s.run(['batch', 'get', id, '--json'])).stdout);
    expect(['validating', 'in_progress']).toContain(after.status);
  });

  // timeout 600 router batch get ID --watch in a CI script: its log says how to go on, as after Ctrl-C.
  it('SIGTERM during --watch stops it as Ctrl-C does, saying how to resume, and exits 143', async () => {
    const p = join(s.dir, 'term.jsonl');
    writeFileSync(p, Array.from({ length: 50 }, (_, i) => line(`t${i}`, 'x')).join('\n'));
    await s.admin('batches', { delay_ms: 600_000 });
    const id = (await s.run(['batch', 'create', p, '--model', 'local/echo'])).stdout.trim();
    s.clearRequests();
    const child = s.spawn(['batch', 'get', id, '--watch', '--interval', '0.1', '--results', join(s.dir, 'term-out.jsonl')]);
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    expect(await until(() => s.requests().filter((r) => r.path === `/v1/batches/${id}`).length >= 2)).toBe(true);
    child.kill('SIGTERM');
    const code = await new Promise((r) => child.on('close', r));
    expect(code).toBe(143);
    expect(stderr).toContain(`stopped watching; ${id} keeps running. Resume with: router batch get ${id} --watch --interval 0.1 --results `);
    expect(stderr).toMatch(/error: terminated\n$/);
  });
});
