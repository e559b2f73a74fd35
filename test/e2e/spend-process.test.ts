import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, startTestEnv } from '../helpers.js';
import { hasOpen, until } from '../support/until.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';
import { closedStatus } from '../support/run-process.js';
import { startedForAll } from '../support/for-all.js';

// What only a process shows: chat -i in a real terminal (tmux), Ctrl-C while the ledger is read.
const t = startedForAll(() => startTestEnv());

/** One turn of chat -i in a real terminal (tmux) under a daily budget; what the screen showed. */
async function repl(budget: string): Promise<string> {
  const term = new Terminal({ ...t.env, ROUTER_DAILY_BUDGET: budget });
  try {
    term.run(`node ${BIN} chat -i --model local/lorem`);
    await term.waitFor(/^>\s*$/m);
    term.run('write 5 words');
    // The answer or the budget's error line, then the prompt again.
    await term.waitFor(/write 5 words\n(?:[^\n]*\n)+>\s*$/);
    term.run('/exit');
    expect(await term.lastExit()).toBe(0);
    return await term.screen();
  } finally {
    await term.close();
  }
}

describe.skipIf(!HAS_TMUX)('budgets in chat -i', () => {
  it("each turn is in the usage ledger and held to the budgets: a reached one is that turn's error line, nothing sent", async () => {
    t.clearRequests();
    await repl('5');
    const chats = () => t.requests().filter((q) => q.path === '/v1/chat/completions');
    expect(chats()).toHaveLength(1);
    const ledger = readFileSync(join(t.env.ROUTER_STATE_DIR, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { cost: number });
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ command: 'chat', model: 'local/lorem' });
    expect(ledger[0]!.cost).toBeGreaterThan(0);
    const reached = await repl('0.000001');
    expect(reached).toMatch(/error: daily_budget of \$0\.000001 reached \(ROUTER_DAILY_BUDGET\)/);
    expect(chats()).toHaveLength(1);
  });
});

describe('Ctrl-C while a long ledger is read', () => {
  it('router usage stops at once: exit 130, "interrupted", no totals', async () => {
    const state = join(t.dir, 'long-ledger');
    mkdirSync(state, { recursive: true });
    const line = `${JSON.stringify({ time: new Date().toISOString(), profile: 'default', command: 'chat', model: 'local/echo', cost: 0.00001 })}\n`;
    const chunk = line.repeat(10_000);
    const fd = openSync(join(state, 'usage.jsonl'), 'w');
    // 2,000,000 lines: about 2 s to read, well past the interrupt.
    for (let i = 0; i < 200; i++) writeSync(fd, chunk);
    closeSync(fd);
    const child = spawn('node', [BIN, 'usage'], { env: { ...process.env, ...t.env, ROUTER_STATE_DIR: state } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    // Once the ledger is open, the command is reading it (its Ctrl-C handling is up since it started).
    expect(await until(() => hasOpen(child.pid!, join(state, 'usage.jsonl')))).toBe(true);
    child.kill('SIGINT');
    const code = await closedStatus(child);
    expect({ code, stdout, stderr }).toEqual({ code: 130, stdout: '', stderr: 'error: interrupted\n' });
  });
});
