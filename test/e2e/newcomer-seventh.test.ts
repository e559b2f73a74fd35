import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { BIN, startTestEnv } from '../helpers.js';

// Issue 46, round 7: what only the real process shows. stderr's reader going away (`2>&1 | head -1`)
// is not the command's failure: the work goes on to its own exit code.
it('batch run --results FILE 2>&1 | head -1: the run finishes, its results written, exit 0', async () => {
  // Each request waits 10 ms in the batch engine: the run's later progress lines come well after head has gone.
  const t = await startTestEnv({ batchDelayMs: 10 });
  const dir = mkdtempSync(join(tmpdir(), 'router-stderr-pipe-'));
  try {
    const lines = Array.from({ length: 30 }, (_, i) => JSON.stringify({ custom_id: `q${i}`, body: { messages: [{ role: 'user', content: `r ${i}` }] } }));
    writeFileSync(join(dir, 'in.jsonl'), `${lines.join('\n')}\n`);
    const script = 'set -o pipefail; node "$BIN" batch run in.jsonl --model local/echo --watch --results out.jsonl 2>&1 | head -1; echo "${PIPESTATUS[0]}" > code';
    const child = spawn('bash', ['-c', script], { cwd: dir, env: { ...process.env, ...t.env, BIN, ROUTER_NO_LOG: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    await new Promise((done) => child.on('close', done));
    expect(out).toMatch(/^job job_\w+: 30 requests in 1 shard\n$/);
    expect(readFileSync(join(dir, 'code'), 'utf8')).toBe('0\n');
    expect(readFileSync(join(dir, 'out.jsonl'), 'utf8').trim().split('\n')).toHaveLength(30);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  }
});
