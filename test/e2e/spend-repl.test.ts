import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';

// chat -i needs a real terminal (script gives it one): each turn is a call, in the ledger and held to the budgets.
let t: TestEnv;
beforeAll(async () => {
  t = await startTestEnv();
});
afterAll(() => t.close());

async function repl(budget: string): Promise<string> {
  const feed = `(sleep 0.8; printf 'write 5 words\\r'; sleep 1; printf '/exit\\r'; sleep 0.3)`;
  // Asynchronous: the emulator answers from this process, so it must not be blocked.
  const child = spawn('bash', ['-c', `${feed} | script -qfec "node ${BIN} chat -i --model local/lorem" /dev/null`], { env: { ...process.env, ...t.env, ROUTER_DAILY_BUDGET: budget } });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  await new Promise((done) => child.on('close', done));
  // eslint-disable-next-line no-control-regex
  return out.replace(/\r/g, '').replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
}

describe('budgets in chat -i', () => {
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
  }, 20_000);
});
