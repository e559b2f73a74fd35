/**
 * Scripting as with gh: --json FIELDS and --jq on every command with --json, router api, the usage
 * ledger and router usage, and conversations; in process against the emulator over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { seedScripting } from '../support/scripting-state.js';

let t: CliEnv;
let mgmt: Record<string, string>;
let jsonl: string;
beforeAll(async () => {
  t = await startCliEnv();
  mgmt = { ROUTER_MANAGEMENT_KEY: t.managementKey };
  ({ jsonl } = await seedScripting(t));
});
afterAll(() => t.close());

const parse = (s: string) => JSON.parse(s) as unknown;

describe('cost you can see and sum', () => {
  it('--usage on chat, responses, embed, speak and decide', async () => {
    const runs: [string[], RegExp][] = [
      [['chat', '--model', 'local/echo', 'hi', '--usage'], /^usage: \d+ prompt \+ \d+ completion = \d+ tokens, cost \$0\.\d+$/m],
      [['responses', '--model', 'local/echo', 'hi', '--usage'], /^usage: \d+ input \+ \d+ output = \d+ tokens, cost \$/m],
      [['embed', 'hi', '--model', 'local/embed', '--usage'], /^usage: \d+ input tokens?, cost \$0\.0+\d+$/m],
      [['decide', '--model', 'local/judge', '--state-text', 'x', '--noul', 'q', 'ok?', '--usage'], /^usage: \d+ input \+ \d+ output = \d+ tokens, cost \$/m],
      [['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'u.mp3'), '--usage'], /^usage: \d+ bytes of audio for 2 characters, cost \$0\.000030$/m],
    ];
    for (const [args, line] of runs) {
      const r = await t.run(args, { env: mgmt });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(line);
    }
  });

  it('the ledger keeps every line under 8 concurrent processes, and usage totals match the emulator\'s billing', async () => {
    const ws = await t.admin('workspaces', { credits: 5 });
    const state = join(t.dir, 'ledger-state');
    const env = { ROUTER_API_KEY: ws.api_key, ROUTER_STATE_DIR: state, ROUTER_MANAGEMENT_KEY: ws.management_key };
    const runs = Array.from({ length: 8 }, (_, i) => t.run(['chat', '--model', 'local/lorem', `write ${20 + i} words`], { env }));
    runs.push(t.run(['embed', 'a', 'b', '--model', 'local/embed'], { env }), t.run(['decide', '--model', 'local/judge', '--state-text', 'x', '--noul', 'q', 'ok?'], { env }));
    expect((await Promise.all(runs)).map((r) => r.code)).toEqual(Array(10).fill(0));
    await t.run(['batch', 'create', jsonl, '--watch', '--interval', '0.05'], { env });
    // Left out of the ledger (and billed to another workspace, so the sums below stay exact).
    await t.run(['chat', '--model', 'local/lorem', 'not logged', '--no-log'], { env: { ROUTER_STATE_DIR: state } });
    await t.run(['chat', '--model', 'local/lorem', 'not logged either'], { env: { ROUTER_STATE_DIR: state, ROUTER_NO_LOG: '1' } });
    const lines = readFileSync(join(state, 'usage.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(11);
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    const report = parse((await t.run(['usage', '--json', '--by', 'command'], { env })).stdout) as any;
    const balance = (await (await fetch(`${t.apiRoot}/_emulator/credits`, { method: 'POST', headers: { authorization: `Bearer ${ws.management_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 0 }) })).json()) as { balance: number };
    // What the emulator charged the workspace is what the ledger sums.
    expect(report.total.cost).toBeCloseTo(5 - balance.balance, 9);
    expect(report.total.cost).toBeGreaterThan(0);
    expect(report.rows.map((r: any) => [r.key, r.calls])).toEqual([['batch create', 1], ['chat', 8], ['decide', 1], ['embed', 1]]);
  });

  it('a line torn by a full disk loses only itself: the record appended onto it is counted', async () => {
    const state = join(t.dir, 'torn-ledger');
    mkdirSync(state, { recursive: true });
    const record = (cost: number) => JSON.stringify({ time: new Date().toISOString(), profile: 'default', command: 'chat', model: 'local/echo', cost });
    writeFileSync(join(state, 'usage.jsonl'), `${record(0.25)}\n${record(0.5).slice(0, 40)}${record(1)}\n${record(2)}\n`);
    const r = await t.run(['usage', '--json'], { env: { ROUTER_STATE_DIR: state } });
    expect((parse(r.stdout) as any).total).toMatchObject({ calls: 3, cost: 3.25 });
    // The torn record's cost is not known: said, not dropped unseen (before, stderr was empty).
    expect(r.stderr).toBe(`warning: 1 line of the usage ledger ${join(state, 'usage.jsonl')} (line 2) is damaged (torn, overwritten, or not as router writes one: a cost not a number or below 0, a time not a date, no profile) and skipped: what it cost is not counted here, nor by the budgets\n`);
  });

  it('lines no record can be read from (overwritten, over 64 KiB) are counted in one warning; blank lines are no damage', async () => {
    const state = join(t.dir, 'damaged-ledger');
    mkdirSync(state, { recursive: true });
    const record = JSON.stringify({ time: new Date().toISOString(), profile: 'default', command: 'chat', model: 'local/echo', cost: 0.5 });
    writeFileSync(join(state, 'usage.jsonl'), `${record}\n\n\u0000\u0000garbage\n${'x'.repeat(70_000)}\n[1]\n${record}\n`);
    const r = await t.run(['usage', '--json'], { env: { ROUTER_STATE_DIR: state } });
    expect((parse(r.stdout) as any).total).toMatchObject({ calls: 2, cost: 1 });
    expect(r.stderr).toMatch(/^warning: 3 lines of the usage ledger .* \(lines 3, 4, 5\) are damaged \(torn, overwritten, or not as router writes one: a cost not a number or below 0, a time not a date, no profile\) and skipped: what they cost is not counted here, nor by the budgets\n$/);
  });
});
