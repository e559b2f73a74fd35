import { expect, it } from 'vitest';
import { BIN, type TestEnv } from '../helpers.js';
import { cutByHead, interruptedMidStream, ledger, reconciled } from '../support/cut-stream.js';
import { terminalsOnEmulator } from '../support/terminal-file.js';
import { HAS_TMUX } from '../support/tmux.js';

// Issue 46, round 8: a streamed answer cut by the user (Ctrl-C, `| head`) is charged for what was
// generated; the usage ledger (and so the budgets) lost it. It is kept with its id, without a cost,
// and `usage --reconcile` then makes the ledger agree with the credits charged.
let t: TestEnv;
const open = terminalsOnEmulator((started) => (t = started));

const LONG = ['chat', '--model', 'local/lorem', '--max-tokens', '200000', 'write 200000 words'];

it('Ctrl-C mid-stream: exit 130, the call in the ledger with its id; reconciled, the ledger agrees with the credits', async () => {
  const { code, stderr } = await interruptedMidStream(t, LONG);
  expect(code).toBe(130);
  expect(stderr).toContain('note: the answer was cut before its cost came; it is in the usage ledger without it, counted at its bound where a budget holds (router usage --reconcile asks the service)\n');
  const [line] = ledger(t);
  expect(line).toMatchObject({ command: 'chat', endpoint: '/v1/chat/completions', model: 'local/lorem', id: expect.stringMatching(/^gen-/) });
  expect(line).not.toHaveProperty('cost');
  const after = await reconciled(t, line!.id as string);
  expect(after.code).toBe(0);
  expect(after.total).toBeGreaterThan(0);
  expect(after.total).toBe(after.charged);
});

it('| head -c 5: the reader gone ends router at once, and the call is still in the ledger', async () => {
  const { code, added: kept } = await cutByHead(t, LONG);
  expect(code).toBe(0);
  expect(kept).toHaveLength(1);
  expect(kept[0]).toMatchObject({ command: 'chat', model: 'local/lorem', id: expect.stringMatching(/^gen-/) });
});

it.skipIf(!HAS_TMUX)('chat -i: an answer stopped with Ctrl-C is in the ledger with its id (it was charged)', async () => {
  const before = ledger(t).length;
  const term = await open();
  term.run(`node ${BIN} chat -i --model local/lorem --max-tokens 200000 --raw`);
  await term.waitFor(/^>\s*$/m);
  term.run('write 200000 words');
  // Stopped once the answer is under way: its words are on the screen.
  await term.waitFor(/^[A-Z][a-z]+ [a-z]+ [a-z]+/m);
  term.keys('C-c');
  await term.waitFor(/answer stopped/);
  term.keys('C-d');
  expect(await term.lastExit()).toBe(0);
  const kept = ledger(t).slice(before);
  expect(kept).toHaveLength(1);
  expect(kept[0]).toMatchObject({ command: 'chat', model: 'local/lorem', id: expect.stringMatching(/^gen-/) });
  expect(kept[0]).not.toHaveProperty('cost');
});
