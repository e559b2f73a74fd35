import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, startTestEnv } from '../helpers.js';
import { startedForAll } from '../support/for-all.js';

// Node reads the command line as UTF-8 and makes each invalid byte U+FFFD: a prompt typed in
// Latin-1 was sent garbled, without a word. The raw bytes tell an invalid byte from a real U+FFFD.
const t = startedForAll(() => startTestEnv());

/**
 * router with arguments given as bytes (printf escapes), through a shell: node's spawn takes only
 * strings. Never spawnSync: the emulator answers from this process.
 */
function runBytes(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `exec "${process.execPath}" "${BIN}" ${args.map((a) => (a.includes('\\') ? `"$(printf '${a}')"` : `'${a}'`)).join(' ')}`;
  const child = spawn('sh', ['-c', script], { env: { ...process.env, ...t.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe.runIf(process.platform === 'linux')('arguments that are not UTF-8', () => {
  it('a prompt with invalid UTF-8 is refused (exit 2, nothing sent); a real U+FFFD and UTF-8 text go', async () => {
    t.clearRequests();
    const bad = await runBytes(['chat', '--model', 'local/echo', 'caf\\351 au lait']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('error: argument 4 ("caf\uFFFD au lait") is not valid UTF-8 (its invalid bytes read as U+FFFD): give it in UTF-8; nothing was sent\n');
    expect((await runBytes(['embed', '--model', 'local/embed', 'ok', '\\377'])).code).toBe(2);
    expect(t.requests()).toHaveLength(0);
    expect(await runBytes(['chat', '--model', 'local/echo', 'real \\357\\277\\275 and caf\\303\\251'])).toMatchObject({ code: 0, stdout: 'real \uFFFD and café\n' });
  });
});
