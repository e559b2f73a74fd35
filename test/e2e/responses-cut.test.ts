import { expect, it } from 'vitest';
import { startTestEnv } from '../helpers.js';
import { cutByHead, interruptedMidStream, ledger, reconciled } from '../support/cut-stream.js';
import { startedForAll } from '../support/for-all.js';

// A streamed `router responses` cut by the user (Ctrl-C, `| head`) is charged for what was generated,
// as chat's is (newcomer-eighth.test.ts): it is kept in the usage ledger with its response id, without
// a cost, and `usage --reconcile` then makes the ledger agree with the credits charged.
const t = startedForAll(() => startTestEnv());

const LONG = ['responses', '--model', 'local/lorem', '--max-output-tokens', '200000', 'write 200000 words'];

it('Ctrl-C mid-stream: exit 130, the response in the ledger with its id; reconciled, the ledger agrees with the credits', async () => {
  const { code, stderr } = await interruptedMidStream(t, LONG);
  expect(code).toBe(130);
  expect(stderr).toContain('note: the answer was cut before its cost came; it is in the usage ledger without it, counted at its bound where a budget holds (router usage --reconcile asks the service)\n');
  const [line] = ledger(t);
  expect(line).toMatchObject({ command: 'responses', endpoint: '/v1/responses', model: 'local/lorem', id: expect.stringMatching(/^resp_/) });
  expect(line).not.toHaveProperty('cost');
  const after = await reconciled(t, line!.id as string);
  expect(after.code).toBe(0);
  expect(after.total).toBeGreaterThan(0);
  expect(after.total).toBe(after.charged);
});

it('| head -c 5: the reader gone ends router at once, and the response is still in the ledger', async () => {
  const { code, added: kept } = await cutByHead(t, LONG);
  expect(code).toBe(0);
  expect(kept).toHaveLength(1);
  expect(kept[0]).toMatchObject({ command: 'responses', model: 'local/lorem', id: expect.stringMatching(/^resp_/) });
});
