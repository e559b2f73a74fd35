import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { BIN, startTestEnv } from '../helpers.js';

// Issue 46: `while read f; do router chat "… $f"; done < list` sends each line once, with --no-stdin or
// ROUTER_NO_STDIN; without either the first call takes the rest of the list as its stdin.
it('a while-read loop over a list: one call per line with --no-stdin or ROUTER_NO_STDIN', async () => {
  const t = await startTestEnv();
  const dir = mkdtempSync(join(tmpdir(), 'router-loop-'));
  try {
    writeFileSync(join(dir, 'list'), 'a.txt\nb.txt\nc.txt\n');
    // Not a sync spawn: the emulator answers from this process.
    const loop = (flag: string, extra: Record<string, string> = {}) =>
      new Promise<string>((done) => {
        const child = spawn('bash', ['-c', `while read f; do node "$BIN" chat ${flag} --model local/echo "about $f"; done < list`], { cwd: dir, env: { ...process.env, ...t.env, ...extra, BIN, ROUTER_NO_LOG: '1' } });
        let out = '';
        child.stdout.on('data', (c) => (out += c));
        child.on('close', () => done(out));
      });
    expect(await loop('--no-stdin')).toBe('about a.txt\nabout b.txt\nabout c.txt\n');
    expect(await loop('', { ROUTER_NO_STDIN: '1' })).toBe('about a.txt\nabout b.txt\nabout c.txt\n');
    expect(await loop('')).toBe('b.txt\nc.txt\n\nabout a.txt\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  }
});
